import type { Clock } from '../../src/fire/types.js';

/**
 * A clock that moves only when the test says so. Sleepers wake in deadline
 * order as `advance` passes their deadline; an aborted sleep resolves false.
 */
export class ManualClock implements Clock {
  private sleepers: { until: number; resolve: (v: boolean) => void }[] = [];
  /**
   * Awaited after each wake-up before time moves on (default: nothing more than settling). A
   * daemon test sets it to "the scheduler's loop is asleep again", so a turn that waits for
   * real I/O (a PostgreSQL write) is over before the clock passes the next deadline.
   */
  between: (() => Promise<void>) | undefined;
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry = { until: this.t + ms, resolve };
      this.sleepers.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          this.sleepers = this.sleepers.filter((s) => s !== entry);
          resolve(false);
        },
        { once: true },
      );
    });
  }
  /** Moves time forward by `ms`, waking sleepers in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      const next = this.sleepers
        .filter((s) => s.until <= target)
        .sort((a, b) => a.until - b.until)[0];
      if (!next) break;
      this.t = Math.max(this.t, next.until);
      this.sleepers = this.sleepers.filter((s) => s !== next);
      next.resolve(true);
      await settle();
      await this.between?.();
    }
    this.t = target;
    await settle();
    await this.between?.();
  }
}

/** Lets pending promise continuations and I/O callbacks run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}
