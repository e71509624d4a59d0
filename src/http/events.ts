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
 *
 * Streams are capped (SPEC §9 item 9): at most {@link HubOptions.maxStreams} at once and
 * {@link HubOptions.maxStreamsPerClient} per client (remote address; an IPv6 client by its
 * /64). Past a cap a stream is answered `503 unavailable` with `Retry-After` and
 * `Connection: close`, so the refused connection frees its descriptor at once. The number open
 * is the `cronix_event_streams` gauge; a stream's resources go when its client leaves (the
 * server cancels the body, which removes the client here). Logging out ends the streams opened
 * with that session; a credential revoked or expired ends its streams within seconds
 * (`stream-guard.ts`, through {@link StreamOwner.watch}).
 */
import { randomBytes } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DaemonEmitter, DaemonEvents } from '../daemon/events.js';
import type { NotificationRecord, RunRecord } from '../daemon/store/types.js';
import { notificationJson } from './notifications.js';
import { errorJson, runJson } from './serialize.js';
import { clientKey } from './throttle.js';

/** Tunables of {@link EventHub}. */
export interface HubOptions {
  /** Events kept for resumption; default 2,000. */
  bufferSize?: number;
  /** A comment line is sent this often so proxies keep the stream open; default 15 s. */
  heartbeatMs?: number;
  /** Events queued for one slow client before it is disconnected; default 10,000. */
  maxPending?: number;
  /** Streams open at once, all clients together; default {@link MAX_STREAMS}. */
  maxStreams?: number;
  /** Streams open at once per client (remote address); default {@link MAX_STREAMS_PER_CLIENT}. */
  maxStreamsPerClient?: number;
  /** Where `cronix_event_streams` and `cronix_event_streams_refused_total` are registered. */
  registry?: Registry;
  /**
   * Called once a burst of streams has ended (see {@link BURST}): the daemon asks V8 for a full
   * collection there (`collect.ts`), so the memory of the streams is given back. Default none.
   */
  afterBurst?: () => void;
}

/**
 * Streams opened or refused since the last {@link HubOptions.afterBurst} that make a burst;
 * it has ended when the streams still open are a tenth of its peak or fewer. At most one call a
 * minute, a second after the burst ended.
 */
export const BURST = 256;
const AFTER_BURST_DELAY_MS = 1_000;
const AFTER_BURST_EVERY_MS = 60_000;

/** Default cap on open event streams. */
export const MAX_STREAMS = 500;
/** Default cap on open event streams per client address. */
export const MAX_STREAMS_PER_CLIENT = 32;

/** Who opens a stream: its client address and, with a cookie, its session. */
export interface StreamOwner {
  client?: string | undefined;
  session?: string;
  /**
   * Subscribes `leave` to the client going away before the stream is cancelled (its half of the
   * connection closed: the server keeps half-open connections, see `serve.ts`); returns the
   * unsubscribe, called when the stream ends.
   */
  onLeave?: (leave: () => void) => () => void;
  /**
   * Subscribes `end` to the stream's credential no longer holding (revoked, expired:
   * `stream-guard.ts`); returns the unsubscribe, called when the stream ends.
   */
  watch?: (end: () => void) => () => void;
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
  /** {@link clientKey} of its remote address. */
  key: string;
  session: string | undefined;
  /** Unsubscribes from {@link StreamOwner.onLeave}. */
  unsubscribe?: () => void;
  /** Unsubscribes from {@link StreamOwner.watch}. */
  unwatch?: () => void;
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
  private readonly maxStreams: number;
  private readonly maxPerClient: number;
  /** Open streams per client key. */
  private readonly perClient = new Map<string, number>();
  private readonly refused: Counter | undefined;
  private readonly afterBurst: (() => void) | undefined;
  /** Streams opened or refused since the last collection, and the most open at once. */
  private burst = 0;
  private peak = 0;
  private lastCollect = -Infinity;
  private collectTimer: NodeJS.Timeout | undefined;

  constructor(events: DaemonEmitter, options: HubOptions = {}) {
    this.bufferSize = options.bufferSize ?? 2_000;
    this.maxPending = options.maxPending ?? 10_000;
    this.maxStreams = options.maxStreams ?? MAX_STREAMS;
    this.maxPerClient = options.maxStreamsPerClient ?? MAX_STREAMS_PER_CLIENT;
    this.afterBurst = options.afterBurst;
    if (options.registry) {
      const clients = this.clients;
      new Gauge({
        name: 'cronix_event_streams',
        help: 'Event streams (GET /api/v1/events) open now.',
        registers: [options.registry],
        collect() {
          this.set(clients.size);
        },
      });
      this.refused = new Counter({
        name: 'cronix_event_streams_refused_total',
        help: 'Event streams refused (503) because a cap was reached, by cap.',
        labelNames: ['cap'],
        registers: [options.registry],
      });
    }
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
      this.remove(c); // already closed
    }
  }

  /** Forgets a client (its stream ended); idempotent. */
  private remove(c: Client): void {
    if (!this.clients.delete(c)) return;
    c.unsubscribe?.();
    c.unwatch?.();
    const n = (this.perClient.get(c.key) ?? 1) - 1;
    if (n <= 0) this.perClient.delete(c.key);
    else this.perClient.set(c.key, n);
    this.maybeAfterBurst();
  }

  /** Schedules {@link HubOptions.afterBurst} once a burst has ended. */
  private maybeAfterBurst(): void {
    if (!this.afterBurst || this.collectTimer || this.burst < BURST) return;
    if (this.clients.size * 10 > this.peak) return;
    const wait = Math.max(
      AFTER_BURST_DELAY_MS,
      this.lastCollect + AFTER_BURST_EVERY_MS - Date.now(),
    );
    this.collectTimer = setTimeout(() => {
      this.collectTimer = undefined;
      if (this.clients.size * 10 > this.peak) return; // a new burst began
      this.burst = 0;
      this.peak = this.clients.size;
      this.lastCollect = Date.now();
      this.afterBurst?.();
    }, wait);
    this.collectTimer.unref();
  }

  private drop(c: Client): void {
    this.remove(c);
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

  /** Why a new stream of `key` is refused (the cap reached), or null. */
  private capReached(key: string): { cap: string; message: string } | null {
    if (this.clients.size >= this.maxStreams)
      return {
        cap: 'total',
        message: `too many event streams open (${this.maxStreams}, serve --max-event-streams); try again later`,
      };
    if ((this.perClient.get(key) ?? 0) >= this.maxPerClient)
      return {
        cap: 'client',
        message: `too many event streams open from this address (${this.maxPerClient}, serve --max-event-streams-per-client); close some first`,
      };
    return null;
  }

  /**
   * A streaming response for one client, or a 503 when a cap is reached. The client is counted
   * from here, before the response is sent, so a burst of connections cannot pass the caps.
   */
  stream(lastEventId: string | undefined, filter: StreamFilter, owner: StreamOwner = {}): Response {
    const key = clientKey(owner.client);
    const full = this.capReached(key);
    this.burst++;
    if (full !== null) {
      this.refused?.inc({ cap: full.cap });
      this.maybeAfterBurst();
      return new Response(JSON.stringify(errorJson('unavailable', full.message)), {
        status: 503,
        headers: {
          'content-type': 'application/json',
          'retry-after': '5',
          connection: 'close',
        },
      });
    }
    let client: Client | undefined;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          const c: Client = { filter, controller, key, session: owner.session };
          client = c;
          if (owner.onLeave) c.unsubscribe = owner.onLeave(() => this.drop(c));
          if (owner.watch) c.unwatch = owner.watch(() => this.drop(c));
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
          this.perClient.set(key, (this.perClient.get(key) ?? 0) + 1);
          this.peak = Math.max(this.peak, this.clients.size);
        },
        cancel: () => {
          if (client) this.remove(client);
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

  /** Ends the streams opened with session `nonce` (it logged out). */
  endSession(nonce: string): void {
    for (const c of [...this.clients]) if (c.session === nonce) this.drop(c);
  }

  /** Ends every stream and stops listening (daemon shutdown). */
  close(): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.collectTimer);
    for (const f of this.off) f();
    for (const c of [...this.clients]) this.drop(c);
  }
}

function matches(filter: StreamFilter, e: HubEvent): boolean {
  if (e.app === null) return true;
  if (filter.app !== undefined && filter.app !== e.app) return false;
  return filter.job === undefined || filter.job === e.job;
}
