/**
 * The change feed of one replica (SPEC §10, §13): its subscription, and the
 * live views it carries. Every timer is on the injected clock.
 *
 * - **Subscription.** One subscription to the store's feed for the replica's
 *   life; when it is lost it is taken again after {@link RESUBSCRIBE_MS}. Its
 *   messages go to the replica (wake-ups) or, on a standby, to the live view.
 * - **Leader.** The runs it records, starts and ends and the notifications it
 *   records or delivers are gathered for {@link LIVE_BATCH_MS} and announced
 *   in one message listing up to {@link LIVE_MAX_RUNS} ids; a busier batch is
 *   announced as "many", at most once per {@link LIVE_MANY_MS}. Pauses are
 *   announced as they happen.
 * - **Standby.** It reads the announced runs and notifications back from the
 *   store (one query each) and puts them in its event stream (`replica-run`,
 *   `replica-notification`, `job-paused`), or tells its clients to reload
 *   (`replica-reset`). Best effort: a lost message costs a live update, never a run.
 */
import type { Clock } from '../../fire/types.js';
import type { DaemonEmitter } from '../events.js';
import type { Coordination, FeedMessage, LiveChange, Subscription } from '../store/coordination.js';
import type { RunRecord, Store } from '../store/types.js';
import { ClockTimer } from './timers.js';

/** The leader gathers run changes this long before it announces them to the standbys. */
export const LIVE_BATCH_MS = 100;
/** Most runs (and notifications) one announcement lists; a busier batch is "many" (reload). */
export const LIVE_MAX_RUNS = 100;
/** "many" is announced at most this often: each one makes every standby client reload. */
export const LIVE_MANY_MS = 1000;
/** A lost subscription is taken again after this long. */
export const RESUBSCRIBE_MS = 1000;

/** What the feed needs. */
export interface LiveDeps {
  coordination: Coordination;
  /** The unfenced store, for reading announced runs back. */
  store: Store;
  clock: Clock;
  events: DaemonEmitter;
  /** True while this replica leads (it announces) rather than stands by (it reads back). */
  leading(): boolean;
  /** Every message but the live ones: wake-ups for the replica. */
  onWake(message: Exclude<FeedMessage, { kind: 'live' }>): void;
}

/** One replica's change feed; see the module comment. */
export class LiveFeed {
  /** Runs changed since the last announcement (leader); null once more than can be listed. */
  private runs: Set<string> | null = new Set();
  /** Notifications changed since the last announcement (leader), as for runs. */
  private notes: Set<string> | null = new Set();
  private readonly batch: ClockTimer;
  private lastMany = -Infinity;
  /** Announcements a standby is reading back, one after another. */
  private reading: Promise<void> = Promise.resolve();
  private subscription: Subscription | null = null;
  private readonly again: ClockTimer;
  private stopped = false;

  constructor(private readonly deps: LiveDeps) {
    this.batch = new ClockTimer(deps.clock);
    this.again = new ClockTimer(deps.clock);
  }

  // ---- the subscription ----

  /** Subscribes (a failure is retried after {@link RESUBSCRIBE_MS}, not thrown). */
  async start(): Promise<void> {
    if (this.stopped) return;
    try {
      const sub = await this.deps.coordination.subscribe((m) => this.message(m));
      if (this.stopped) return void (await sub.close());
      this.subscription = sub;
      void sub.closed.then(() => {
        if (this.subscription === sub) this.subscription = null;
        this.resubscribe();
      });
    } catch {
      this.resubscribe();
    }
  }

  /** Flushes what the leader gathered, and ends the subscription. */
  async stop(): Promise<void> {
    this.flush(true);
    this.stopped = true;
    this.again.clear();
    this.batch.clear();
    const sub = this.subscription;
    this.subscription = null;
    await sub?.close();
  }

  private resubscribe(): void {
    if (!this.stopped) this.again.set(RESUBSCRIBE_MS, () => void this.start());
  }

  private message(m: FeedMessage): void {
    if (m.kind !== 'live') return this.deps.onWake(m);
    if (!this.deps.leading()) this.received(m.change);
  }

  // ---- leader ----

  /** A run or notification changed; it is announced with the others of its batch. */
  changed(what: 'run' | 'notification', id: string): void {
    if (!this.deps.leading() || this.stopped) return;
    const set = what === 'run' ? this.runs : this.notes;
    if (set !== null) {
      set.add(id);
      if (set.size > LIVE_MAX_RUNS) this.runs = this.notes = null;
    }
    if (!this.batch.pending) this.batch.set(LIVE_BATCH_MS, () => this.flush(false));
  }

  /** Announces `change` now (a pause). */
  announce(change: LiveChange): void {
    void this.deps.coordination.publish({ kind: 'live', change }).catch(() => undefined); // best effort: a lost announcement costs a live update only
  }

  /** Announces the batch gathered so far; `final`: now, even a "many" (shutting down). */
  flush(final: boolean): void {
    this.batch.clear();
    const { runs, notes } = this;
    // both are null together: a burst, announced as one "many" per LIVE_MANY_MS (and one after
    // its last change)
    if (runs === null || notes === null) {
      const wait = this.lastMany + LIVE_MANY_MS - this.deps.clock.now();
      if (wait > 0 && !final) {
        this.batch.set(wait, () => this.flush(false));
        return;
      }
      this.lastMany = this.deps.clock.now();
      this.announce({ many: true });
    } else if (runs.size + notes.size > 0)
      this.announce({ runs: [...runs], notifications: [...notes] });
    this.runs = new Set();
    this.notes = new Set();
  }

  // ---- standby ----

  /** Puts what the leader announced into this replica's event stream, in order. */
  private received(change: LiveChange): void {
    const { events, store } = this.deps;
    this.reading = this.reading
      .then(async () => {
        if ('many' in change) events.emit('replica-reset');
        else if ('job' in change) events.emit('job-paused', change.job);
        else if ('runs' in change) {
          const [runs, notes] = await Promise.all([
            store.runsByIds(change.runs ?? []),
            store.notificationsByIds(change.notifications ?? []),
          ]).catch(() => [null, null]);
          if (runs === null || notes === null) return void events.emit('replica-reset');
          for (const run of runs) events.emit('replica-run', { change: changeOf(run), run });
          for (const n of notes) events.emit('replica-notification', n);
        }
      })
      .catch(() => undefined); // a failing listener must not stop the announcements after it
  }
}

/** The change a run read back from the store stands for, by its phase now. */
function changeOf(run: RunRecord): 'recorded' | 'started' | 'ended' {
  if (run.phase === 'ended') return 'ended';
  return run.phase === 'running' ? 'started' : 'recorded';
}
