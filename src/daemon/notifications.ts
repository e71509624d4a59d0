/**
 * The daemon's notifications (SPEC §12): turns run ends and slow runs into
 * grouped notifications recorded in the store, and delivers them from there.
 *
 * - **Recording.** Each event is one store operation (grouping decided in the
 *   transaction, `notify-plan.ts`), made in event order, off the run's path: a
 *   run never waits for it. A failed write is retried; a write refused for a
 *   stale leader epoch is dropped (the new leader owns notifying).
 * - **Delivery.** Its own queue, driven from the store: pending notifications
 *   whose time has come are sent (at most {@link MAX_IN_FLIGHT} at once, each
 *   under its deadline), and each result is recorded: delivered, failed, or
 *   pending again at the next attempt (backoff or `Retry-After`, for up to 10
 *   minutes). Whatever is pending when the daemon stops or crashes is delivered
 *   by the next one (at least once: a delivery in flight at a crash is repeated;
 *   `X-Cron-Notification-Id` lets receivers dedupe).
 * - **Slow.** A timer per running run of a job with a `slow` entry.
 *
 * One instance per scheduler (per leader term in a cluster), stopped with it.
 */
import { nextAttemptAt } from '../notify/backoff.js';
import type { ResolvedNotifier } from '../notify/resolve.js';
import { uuidv7 } from '../fire/ids.js';
import type { Clock } from '../fire/types.js';
import type { DaemonEmitter } from './events.js';
import { eventOfRun, planEvent, type JobEventKind, type NotifyTarget } from './notify-plan.js';
import type { RegisteredJob } from './registry.js';
import type { NotificationPatch, NotificationRecord, RunRecord, Store } from './store/types.js';

/** Most deliveries in flight at once. */
export const MAX_IN_FLIGHT = 16;
/** The delivery queue looks at the store at least this often, in ms. */
export const POLL_MS = 5000;
/** Attempts of one event's store write before it is given up (logged). */
const RECORD_ATTEMPTS = 5;

/** What {@link Notifications} needs. */
export interface NotificationsDeps {
  store: Store;
  clock: Clock;
  events: DaemonEmitter;
  /** The resolved notifiers of an app, by name (looked up at each delivery: reloads apply). */
  notifiersOf(app: string): ReadonlyMap<string, ResolvedNotifier> | undefined;
}

/** See the module comment. */
export class Notifications {
  private chain: Promise<void> = Promise.resolve();
  private readonly slow = new Map<string, NodeJS.Timeout[]>();
  private readonly inflight = new Set<string>();
  private readonly deliveries = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private pumping = false;
  private again = false;
  /** Delivery runs between start() and stop(); events are recorded until stop(). */
  private started = false;
  private stopped = false;

  constructor(private readonly deps: NotificationsDeps) {}

  /** Starts the delivery queue (pending notifications of an earlier daemon included). */
  start(): void {
    this.started = true;
    this.kick();
  }

  /**
   * Stops: no new events or deliveries; waits up to `graceMs` for the event writes and the
   * deliveries in flight. What is still pending stays in the store for the next daemon.
   */
  async stop(graceMs = 1000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const timers of this.slow.values()) for (const t of timers) clearTimeout(t);
    this.slow.clear();
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([this.chain, ...this.deliveries]),
      new Promise((r) => (timeout = setTimeout(r, graceMs))),
    ]);
    clearTimeout(timeout);
  }

  /** A run started: arms its `slow` timers. */
  runStarted(job: RegisteredJob, run: RunRecord): void {
    if (this.stopped || job.notify.length === 0) return;
    const timers: NodeJS.Timeout[] = [];
    const started = run.startedAt ?? this.deps.clock.now();
    const thresholds = new Set(
      job.notify.filter((t) => t.on.includes('slow')).map((t) => t.slowAfterSeconds),
    );
    for (const seconds of thresholds) {
      const delay = Math.max(0, started + seconds * 1000 - this.deps.clock.now());
      const t = setTimeout(() => {
        const targets = job.notify.filter(
          (x) => x.on.includes('slow') && x.slowAfterSeconds === seconds,
        );
        this.record('slow', run, targets.length > 0 ? { ...job, notify: targets } : null);
      }, delay);
      t.unref();
      timers.push(t);
    }
    if (timers.length > 0) this.slow.set(run.id, timers);
  }

  /** A run ended (any outcome, durable): notifies what it means, if anything. */
  runEnded(job: RegisteredJob | undefined, run: RunRecord): void {
    for (const t of this.slow.get(run.id) ?? []) clearTimeout(t);
    this.slow.delete(run.id);
    const kind = eventOfRun(run);
    if (kind === null || !job || job.notify.length === 0) return;
    this.record(kind, run, job);
  }

  /**
   * A service's crash loop began (`failed`) or ended (`success`: `recovered` when a `failed`
   * group is open), SPEC §17: grouped like a job's events, under the service's name.
   */
  serviceEvent(kind: 'failed' | 'success', run: RunRecord, targets: readonly NotifyTarget[]): void {
    if (targets.length > 0) this.record(kind, run, { notify: targets });
  }

  private record(
    kind: JobEventKind,
    run: RunRecord,
    job: { notify: readonly NotifyTarget[] } | null,
  ): void {
    if (this.stopped || !job) return;
    const at = this.deps.clock.now();
    this.chain = this.chain.then(async () => {
      for (let attempt = 1; attempt <= RECORD_ATTEMPTS; attempt++) {
        try {
          const recorded = await this.deps.store.recordNotifications(run.app, run.job, (groups) =>
            planEvent(kind, run, at, job.notify, groups, () => uuidv7(at)),
          );
          for (const n of recorded) this.deps.events.emit('notification', n);
          if (recorded.length > 0) this.kick();
          return;
        } catch (err) {
          const e = err as Error;
          if (e.name === 'FencedError') return; // no longer the leader: the next one notifies
          const retryInMs = 200 * 2 ** (attempt - 1);
          this.deps.events.emit('store-error', {
            op: 'notification',
            err: e.message,
            retryInMs: attempt < RECORD_ATTEMPTS ? retryInMs : 0,
          });
          if (attempt < RECORD_ATTEMPTS) await new Promise((r) => setTimeout(r, retryInMs));
        }
      }
      this.deps.events.emit('warning', {
        msg: `${run.app}/${run.job}: could not record the ${kind} notification of run ${run.id}`,
      });
    });
  }

  // ---- the delivery queue ----

  /** Looks at the store for due notifications now. */
  private kick(): void {
    if (this.stopped || !this.started) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
    });
  }

  private async pump(): Promise<void> {
    let wait = POLL_MS;
    try {
      do {
        this.again = false;
        const room = MAX_IN_FLIGHT - this.inflight.size;
        if (room <= 0) break;
        const due = await this.deps.store.dueNotifications(
          this.deps.clock.now(),
          room + this.inflight.size,
        );
        for (const n of due) {
          if (this.stopped || this.inflight.size >= MAX_IN_FLIGHT) break;
          if (this.inflight.has(n.id)) continue;
          this.inflight.add(n.id);
          const p: Promise<void> = this.deliver(n).finally(() => {
            this.inflight.delete(n.id);
            this.deliveries.delete(p);
            this.kick();
          });
          this.deliveries.add(p);
        }
      } while (this.again && !this.stopped);
      const next = await this.deps.store.nextNotificationAt();
      if (next !== null) wait = Math.min(POLL_MS, Math.max(0, next - this.deps.clock.now()));
    } catch (err) {
      if ((err as Error).name === 'FencedError') return;
      this.deps.events.emit('store-error', {
        op: 'notification',
        err: (err as Error).message,
        retryInMs: 1000,
      });
      wait = 1000;
    }
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(), Math.max(wait, 10));
    this.timer.unref();
  }

  /** One attempt of one notification, and its durable result. */
  private async deliver(n: NotificationRecord): Promise<void> {
    const sender = this.deps.notifiersOf(n.app)?.get(n.notifier);
    const attempts = n.attempts + 1;
    let patch: NotificationPatch;
    if (!sender) {
      patch = {
        status: 'failed',
        attempts: n.attempts,
        lastStatus: null,
        lastError: `notifier ${n.notifier} is no longer in the manifest`,
        nextAttemptAt: null,
        endedAt: this.deps.clock.now(),
      };
    } else {
      const res = await sender.deliver(n.body, n.id);
      const now = this.deps.clock.now();
      if (res.ok)
        patch = {
          status: 'delivered',
          attempts,
          lastStatus: res.status,
          lastError: null,
          nextAttemptAt: null,
          endedAt: now,
        };
      else {
        const next = res.permanent
          ? null
          : nextAttemptAt(n.createdAt, attempts, now, res.retryAfterMs);
        patch = {
          status: next === null ? 'failed' : 'pending',
          attempts,
          lastStatus: res.status,
          lastError:
            next === null && !res.permanent
              ? `${res.error} (gave up: retried for up to 10 minutes)`
              : res.error,
          nextAttemptAt: next,
          endedAt: next === null ? now : null,
        };
      }
    }
    try {
      if (await this.deps.store.updateNotification(n.id, patch))
        this.deps.events.emit('notification', { ...n, ...patch });
    } catch (err) {
      if ((err as Error).name === 'FencedError') return;
      // not recorded: the notification stays pending as it was and is tried again
      this.deps.events.emit('store-error', {
        op: 'notification',
        err: (err as Error).message,
        retryInMs: POLL_MS,
      });
    }
  }
}
