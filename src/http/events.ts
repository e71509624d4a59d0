/**
 * `GET /api/v1/events`: the daemon's run and job changes as Server-Sent Events
 * (SPEC §13 "Live"), resumable with `Last-Event-ID`.
 *
 * The hub numbers every event `<boot>.<seq>` (boot = this process) and keeps
 * the newest {@link HubOptions.bufferSize} in a ring. A client that reconnects
 * with a `Last-Event-ID` of this process still in the ring gets exactly the
 * events it missed; any other id (an older process, evicted from the ring)
 * gets one `reset` event, after which it reloads what it shows. A client that
 * reads too slowly (more than {@link HubOptions.maxPending} events queued) is
 * disconnected; its browser reconnects and resumes.
 *
 * Events (each `data` is JSON):
 * - `ready` `{"boot","seq"}`: the stream is live; sent first.
 * - `run` `{"change": "recorded"|"started"|"ended", "run": run}` (the API's run shape).
 * - `job` `{"app","job","paused"}`: a job was paused or resumed.
 * - `jobs` `{"jobs": N}`: the manifests were reloaded (the job list changed).
 * - `notification` `{"notification": notification}` (the API's notification shape): one was
 *   recorded, or a delivery attempt changed it (SPEC §12).
 * - `reset` `{}`: events were missed and cannot be replayed; reload. On a standby replica it
 *   also comes in the stream when the leader changed more runs at once than it announces one
 *   by one (a burst), so the client reloads what it shows.
 */
import { randomBytes } from 'node:crypto';
import type { DaemonEmitter, DaemonEvents } from '../daemon/events.js';
import type { NotificationRecord, RunRecord } from '../daemon/store/types.js';
import { notificationJson } from './notifications.js';
import { runJson } from './serialize.js';

/** Tunables of {@link EventHub}. */
export interface HubOptions {
  /** Events kept for resumption; default 2,000. */
  bufferSize?: number;
  /** A comment line is sent this often so proxies keep the stream open; default 15 s. */
  heartbeatMs?: number;
  /** Events queued for one slow client before it is disconnected; default 10,000. */
  maxPending?: number;
}

/**
 * One event in the ring. Its SSE text is built on first use (a client receives or replays
 * it): a burst of 10,000 runs with nobody watching costs no serialization. Run records are
 * never mutated once emitted (every change makes a new record), so the text is the same
 * whenever it is built.
 */
class HubEvent {
  #text: string | undefined;

  constructor(
    readonly seq: number,
    readonly event: 'run' | 'job' | 'jobs' | 'notification' | 'reset',
    readonly app: string | null,
    readonly job: string | null,
    private data: (() => unknown) | null,
    private readonly boot: string,
  ) {}

  /** The encoded SSE message. */
  get text(): string {
    if (this.#text === undefined) {
      const data = JSON.stringify((this.data as () => unknown)());
      this.#text = `id: ${this.boot}.${this.seq}\nevent: ${this.event}\ndata: ${data}\n\n`;
      this.data = null;
    }
    return this.#text;
  }
}

/** What one client wants: everything, or one app / one job. */
export interface StreamFilter {
  app?: string;
  job?: string;
}

interface Client {
  filter: StreamFilter;
  controller: ReadableStreamDefaultController<Uint8Array>;
}

const encoder = new TextEncoder();

/** The event stream of one daemon process. */
export class EventHub {
  /** Identifies this process in event ids. */
  readonly boot = randomBytes(4).toString('hex');
  private seq = 0;
  private readonly ring: HubEvent[] = [];
  private readonly clients = new Set<Client>();
  private readonly bufferSize: number;
  private readonly maxPending: number;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly off: (() => void)[] = [];

  constructor(events: DaemonEmitter, options: HubOptions = {}) {
    this.bufferSize = options.bufferSize ?? 2_000;
    this.maxPending = options.maxPending ?? 10_000;
    const on = <K extends keyof DaemonEvents>(
      name: K,
      fn: (...args: DaemonEvents[K]) => void,
    ): void => {
      events.on(name, fn as never);
      this.off.push(() => events.off(name, fn as never));
    };
    const run = (change: string) => (r: RunRecord) =>
      this.publish('run', r.app, r.job, () => ({ change, run: runJson(r) }));
    on('run-recorded', run('recorded'));
    on('run-started', run('started'));
    on('run-ended', run('ended'));
    // recorded, then after each delivery attempt; the API's record: no URL, credential or body
    const notification = (n: NotificationRecord) =>
      this.publish('notification', n.app, n.job, () => ({ notification: notificationJson(n) }));
    on('notification', notification);
    // a standby's view of the leader's runs and notifications (high availability)
    on('replica-run', (e) => run(e.change)(e.run));
    on('replica-notification', notification);
    on('replica-reset', () => this.publish('reset', null, null, () => ({})));
    on('job-paused', (e) => this.publish('job', e.app, e.job, () => e));
    on('reloaded', (e) => this.publish('jobs', null, null, () => e));
    this.heartbeat = setInterval(() => this.broadcast(': ping\n\n'), options.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  /** Number of connected clients (tests, diagnostics). */
  get size(): number {
    return this.clients.size;
  }

  private publish(
    event: HubEvent['event'],
    app: string | null,
    job: string | null,
    data: () => unknown,
  ) {
    const e = new HubEvent(++this.seq, event, app, job, data, this.boot);
    this.ring.push(e);
    if (this.ring.length > this.bufferSize) this.ring.shift();
    for (const c of this.clients) if (matches(c.filter, e)) this.send(c, e.text);
  }

  private broadcast(text: string): void {
    for (const c of this.clients) this.send(c, text);
  }

  private send(c: Client, text: string): void {
    if ((c.controller.desiredSize ?? 0) < -this.maxPending) {
      this.drop(c);
      return;
    }
    try {
      c.controller.enqueue(encoder.encode(text));
    } catch {
      this.clients.delete(c); // already closed
    }
  }

  private drop(c: Client): void {
    this.clients.delete(c);
    try {
      c.controller.close();
    } catch {
      // already closed
    }
  }

  /**
   * The missed events after `lastEventId`, or null when they cannot be
   * replayed (another process, or no longer in the ring).
   */
  private since(lastEventId: string): HubEvent[] | null {
    const m = /^([0-9a-f]+)\.(\d+)$/.exec(lastEventId);
    if (!m || m[1] !== this.boot) return null;
    const seq = Number(m[2]);
    if (seq > this.seq) return null;
    const oldest = this.ring[0]?.seq ?? this.seq + 1;
    if (seq < oldest - 1) return null;
    return this.ring.filter((e) => e.seq > seq);
  }

  /** A streaming response for one client. */
  stream(lastEventId: string | undefined, filter: StreamFilter): Response {
    let client: Client | undefined;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          client = { filter, controller };
          const parts = ['retry: 2000\n\n'];
          if (lastEventId !== undefined && lastEventId !== '') {
            const missed = this.since(lastEventId);
            if (missed === null) parts.push(`event: reset\ndata: {}\n\n`);
            else for (const e of missed) if (matches(filter, e)) parts.push(e.text);
          }
          const ready = JSON.stringify({ boot: this.boot, seq: this.seq });
          parts.push(`id: ${this.boot}.${this.seq}\nevent: ready\ndata: ${ready}\n\n`);
          controller.enqueue(encoder.encode(parts.join('')));
          this.clients.add(client);
        },
        cancel: () => {
          if (client) this.clients.delete(client);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, {
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-store',
        'x-accel-buffering': 'no',
      },
    });
  }

  /** Ends every stream and stops listening (daemon shutdown). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const f of this.off) f();
    for (const c of [...this.clients]) this.drop(c);
  }
}

function matches(filter: StreamFilter, e: HubEvent): boolean {
  if (e.app === null) return true;
  if (filter.app !== undefined && filter.app !== e.app) return false;
  return filter.job === undefined || filter.job === e.job;
}
