/**
 * The daemon's one writer to the store: every ledger write goes through here,
 * in the order the scheduler decided it, so the durable history follows the
 * in-memory decisions (a queued run's row is always written before its start,
 * a run's end before the start of the run that takes its key).
 *
 * Writes are grouped: whatever is submitted while a transaction runs goes into
 * the next one, so 10,000 fires of one tick cost a handful of fsyncs. A group
 * (the ops of one submit) never splits across transactions: a catch-up decision
 * and the checkpoint it advances commit together (SPEC §9 item 6). Urgent
 * writes (a run about to start waits for them) go at once; run ends may wait
 * {@link GROUP_COMMIT_MS} to share a transaction.
 *
 * A failing write never kills the daemon and is never dropped while it runs: it
 * is reported through `onError`, retried with backoff, and its callers simply
 * wait; {@link Ledger.health} says how long writes have been failing. Only a
 * shutdown gives up ({@link Ledger.abandon}), counting what was not written.
 *
 * Its timers (the group-commit window, the lazy hold, the retries' backoff) run on
 * `options.clock`, so its tests drive them with a fake clock. The scheduler leaves it on the
 * system clock even under a test's fake clock: those timers batch writes and pace retries, and
 * a run's end must become durable without a test moving time.
 */
import { systemClock } from '../fire/clock.js';
import type { Clock } from '../fire/types.js';
import type { LedgerOp, LedgerResult, Store } from './store/types.js';

/** How long run-end writes wait to share a transaction. */
export const GROUP_COMMIT_MS = 25;
/** Ops in the first transaction after an idle spell: small, so the first requests leave at once. */
export const FIRST_CHUNK = 200;
/** Ops per transaction after the first. */
export const CHUNK = 2000;
/**
 * Longest a run-end write is held back while {@link LedgerOptions.holdLazy} says a burst of
 * requests is still leaving: the burst goes out first, its ends are written right after.
 */
export const MAX_LAZY_HOLD_MS = 5000;
/** Ops per group of {@link Ledger.submitIndependent}. */
export const INDEPENDENT_GROUP = 1000;
/** Backoff between retries of a failed write: from 100 ms, doubling, at most this. */
export const MAX_RETRY_DELAY_MS = 5000;

interface Group {
  ops: readonly LedgerOp[];
  resolve(results: LedgerResult[]): void;
  /** A {@link Ledger.submitThen} callback: called in a microtask, where a promise's would run. */
  callback: boolean;
}

/**
 * Gives a group its results: a promise's resolve, or a callback in a microtask of its own — the
 * order in which the callers' code runs is the order of the groups either way, and a callback
 * that throws stops no other group's delivery.
 */
function deliver(g: Group, results: LedgerResult[]): void {
  if (g.callback) queueMicrotask(() => g.resolve(results));
  else g.resolve(results);
}

/** What a writer that gave up (fenced, or shut down) answers each of `ops`. */
function fenced(ops: readonly LedgerOp[]): LedgerResult[] {
  return ops.map(() => ({ kind: 'fenced' }));
}

/** Options of {@link Ledger}. */
export interface LedgerOptions {
  /** The clock of its timers; default the system clock. */
  clock?: Clock;
  /** Called for every failed transaction (it is retried). */
  onError(err: Error, retryInMs: number, failures: number): void;
  /**
   * Whether an error ends this writer for good (a write refused for a stale
   * leader epoch): nothing is retried, every pending and later group resolves
   * with `fenced` results, and `onFatal` is told once.
   */
  isFatal?(err: Error): boolean;
  onFatal?(err: Error): void;
  /**
   * Whether lazy writes (run ends) should wait a little longer: true while a burst of requests
   * is being sent, whose sending a synchronous commit would hold up. Never longer than
   * {@link MAX_LAZY_HOLD_MS}; an urgent write takes every pending write with it.
   */
  holdLazy?(): boolean;
}

/** The ordered, grouped, retrying writer. */
export class Ledger {
  private pending: Group[] = [];
  /** The group-commit window being waited for, if any (aborted to cancel it). */
  private lazyWait: AbortController | undefined;
  private urgentQueued = false;
  private flushing: Promise<void> | undefined;
  private idleSince = true;
  /** When the oldest lazy write still waiting was submitted (ms, monotonic), or null. */
  private lazySince: number | null = null;
  private fatal: Error | null = null;
  /** Since when (ms, monotonic) writes have been failing, and the last error; null when not. */
  private failing: { since: number; error: string } | null = null;
  private abandoned = false;
  /** Wakes a retry's backoff sleep (abandon). */
  private backoff = new AbortController();
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly options: LedgerOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Queues `ops` as one group; resolves with their results once they are
   * durable. Never rejects: a failed write is retried until it succeeds.
   */
  submit(ops: readonly LedgerOp[], urgent = true): Promise<LedgerResult[]> {
    if (ops.length === 0) return Promise.resolve([]);
    if (this.fatal || this.abandoned) return Promise.resolve(fenced(ops));
    return new Promise((resolve) => {
      this.pending.push({ ops, resolve, callback: false });
      this.kick(urgent);
    });
  }

  /**
   * {@link submit} with a callback instead of a promise, for the many small lazy groups of a
   * burst (each run's attempt and end): a promise, its resolving functions and the caller's
   * reaction were ~1 KB of every run held behind a burst (BENCHMARKS.md). `then` is called once,
   * in a microtask, in the same order as the reactions of promised groups; an exception it
   * throws is uncaught there, like a promise's unhandled rejection.
   */
  submitThen(
    ops: readonly LedgerOp[],
    urgent: boolean,
    then: (results: LedgerResult[]) => void,
  ): void {
    if (ops.length === 0 || this.fatal || this.abandoned) {
      const results = fenced(ops);
      queueMicrotask(() => then(results));
      return;
    }
    this.pending.push({ ops, resolve: then, callback: true });
    this.kick(urgent);
  }

  /**
   * Submits independent ops (first-seen checkpoints) as groups of {@link INDEPENDENT_GROUP}:
   * one group per op would cost a promise and a queue entry each, one group of 100,000 one
   * transaction far over {@link CHUNK}. Lazy writes; resolves once all are durable.
   */
  submitIndependent(ops: readonly LedgerOp[]): Promise<void> {
    const groups: Promise<LedgerResult[]>[] = [];
    for (let at = 0; at < ops.length; at += INDEPENDENT_GROUP)
      groups.push(this.submit(ops.slice(at, at + INDEPENDENT_GROUP), false));
    return Promise.all(groups).then(() => undefined);
  }

  /** Null while writes succeed; else since when they have been failing (ms ago) and why. */
  health(): { failingForMs: number; error: string } | null {
    if (this.failing === null) return null;
    return { failingForMs: this.clock.now() - this.failing.since, error: this.failing.error };
  }

  /**
   * Shutdown: stops retrying. Every write not yet durable is given up (its caller gets `fenced`
   * results) and counted; later submits are refused. Returns how many ops were not written.
   */
  abandon(): number {
    this.abandoned = true;
    this.backoff.abort();
    let lost = 0;
    for (const g of this.pending.splice(0)) {
      lost += g.ops.length;
      deliver(g, fenced(g.ops));
    }
    // the groups being written were still pending, so they are answered here too: what their
    // write returns is dropped ({@link flush}), each group is answered once
    return lost;
  }

  /** Resolves once everything submitted so far is durable. */
  async idle(): Promise<void> {
    while (this.pending.length > 0 || this.flushing) {
      if (this.flushing) await this.flushing;
      else {
        this.kick(true);
        await new Promise((r) => setImmediate(r)); // the flush starts on the next turn
      }
    }
  }

  private kick(urgent: boolean): void {
    if (this.flushing) return; // the running flush picks it up
    if (urgent) {
      if (this.urgentQueued) return;
      this.urgentQueued = true;
      this.cancelLazy();
      setImmediate(() => this.start());
    } else if (!this.lazyWait && !this.urgentQueued) {
      this.lazySince ??= this.clock.now();
      this.armLazy();
    }
  }

  /** Waits one group-commit window, then {@link lazyDue}. */
  private armLazy(): void {
    const wait = new AbortController();
    this.lazyWait = wait;
    void this.clock.sleep(GROUP_COMMIT_MS, wait.signal).then((elapsed) => {
      if (elapsed && this.lazyWait === wait) this.lazyDue();
    });
  }

  private cancelLazy(): void {
    this.lazyWait?.abort();
    this.lazyWait = undefined;
  }

  private lazyDue(): void {
    this.lazyWait = undefined;
    const since = this.lazySince ?? this.clock.now();
    if (this.options.holdLazy?.() && this.clock.now() - since < MAX_LAZY_HOLD_MS) {
      this.armLazy();
      return;
    }
    this.start();
  }

  private start(): void {
    this.urgentQueued = false;
    this.lazySince = null;
    this.cancelLazy();
    if (this.flushing || this.pending.length === 0) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      this.idleSince = true;
      if (this.pending.length > 0) this.kick(true);
    });
  }

  private async flush(): Promise<void> {
    let failures = 0;
    while (this.pending.length > 0 && !this.abandoned) {
      const limit = this.idleSince ? FIRST_CHUNK : CHUNK;
      let count = 0;
      let take = 0;
      while (
        take < this.pending.length &&
        (take === 0 || count + this.pending[take]!.ops.length <= limit)
      ) {
        count += this.pending[take]!.ops.length;
        take += 1;
      }
      const groups = this.pending.slice(0, take);
      let results: LedgerResult[];
      try {
        results = await this.store.write(groups.flatMap((g) => g.ops));
      } catch (caught) {
        const err = caught instanceof Error ? caught : new Error(String(caught));
        if (this.options.isFatal?.(err)) {
          this.fatal = err;
          for (const g of this.pending.splice(0)) deliver(g, fenced(g.ops));
          this.options.onFatal?.(err);
          return;
        }
        if (this.abandoned) return; // its groups were given up with the rest
        failures += 1;
        this.failing ??= { since: this.clock.now(), error: err.message };
        this.failing.error = err.message;
        const delay = Math.min(MAX_RETRY_DELAY_MS, 100 * 2 ** (failures - 1));
        this.options.onError(err, delay, failures);
        await this.sleep(delay);
        continue; // the same groups, in the same order
      }
      if (this.abandoned) return; // its groups were given up (and answered) meanwhile
      failures = 0;
      this.failing = null;
      this.idleSince = false;
      this.pending.splice(0, take);
      let at = 0;
      for (const g of groups) {
        deliver(g, results.slice(at, at + g.ops.length));
        at += g.ops.length;
      }
      // let the requests of this chunk leave before the next chunk's fsync
      if (this.pending.length > 0) await new Promise((r) => setImmediate(r));
    }
  }

  /** A retry's backoff; cut short by {@link abandon}. */
  private async sleep(ms: number): Promise<void> {
    await this.clock.sleep(ms, this.backoff.signal);
  }
}
