/**
 * Per-target rate limits (SPEC §16 `policy.rate`): before each attempt of a job with a rate, it
 * takes the next start time of its key — the starts of every job naming the key are spaced at
 * least `1000 / per_second` ms apart (a leaky bucket with no burst: GCRA with a tolerance of 0),
 * FIFO per key, waiting on the daemon's clock. So no one-second window holds more than
 * `per_second` starts, whatever the runs' triggers (schedule, catch-up, manual, replay,
 * backfill), and the target sees an even flow rather than a burst at each second's start (a
 * sliding window let 2 × the rate arrive within one second at the target: the first burst's
 * connection set-up delayed it into the next). A run that has to wait says so (an `info` event:
 * `waiting for rate limit`) and {@link RateLimits.waitingFor} names what it waits for (the API's
 * `waiting_for` of the run). Hand-written: it is a
 * few lines and must run on the injected clock.
 */
import type { Clock } from '../fire/types.js';
import type { StopSignal } from '../fire/stop.js';

/** See the module comment. */
export class RateLimits {
  /** The earliest start of the next attempt, per key (epoch ms). */
  private readonly next = new Map<string, number>();
  private readonly queues = new Map<string, Promise<void>>();
  /** Runs waiting for a place now, with what they wait for. */
  private readonly waitingRuns = new Map<string, string>();

  constructor(
    private readonly clock: Clock,
    private readonly onWait: (runId: string, key: string, perSecond: number) => void = () =>
      undefined,
  ) {}

  /** What the run waits for now (`rate limit <key> (<n>/s)`), or null when it does not wait. */
  waitingFor(runId: string): string | null {
    return this.waitingRuns.get(runId) ?? null;
  }

  /** Resolves once an attempt of `runId` may start under `key` (or at once when aborted). */
  take(key: string, perSecond: number, runId: string, signal: StopSignal): Promise<void> {
    // FIFO per key: each waits for the one before it to have started
    const mine = (this.queues.get(key) ?? Promise.resolve()).then(() =>
      this.place(key, perSecond, runId, signal),
    );
    this.queues.set(key, mine);
    void mine.then(() => {
      if (this.queues.get(key) === mine) this.queues.delete(key);
    });
    return mine;
  }

  /**
   * Starts at the previous start plus the interval, measured from when the previous one really
   * started (a timer that fired late on a busy loop pushes the next ones back, never bunches them).
   */
  private async place(key: string, perSecond: number, runId: string, signal: StopSignal) {
    try {
      let now = this.clock.now();
      const at = this.next.get(key) ?? now;
      if (at > now && !signal.aborted) {
        this.waitingRuns.set(runId, `rate limit ${key} (${perSecond}/s)`);
        this.onWait(runId, key, perSecond);
        await this.clock.sleep(at - now, signal);
        now = this.clock.now();
      }
      this.next.set(key, Math.max(now, at) + 1000 / perSecond);
    } finally {
      this.waitingRuns.delete(runId);
    }
  }
}
