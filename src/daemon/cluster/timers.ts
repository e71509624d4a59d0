/**
 * Time for the cluster, all of it on the injected {@link Clock}: one-shot
 * timers, waits that a message can cut short, and a term's deadline. No
 * `setTimeout` or `performance.now()` of its own, so a test drives a whole
 * replica with a manual clock.
 */
import type { Clock } from '../../fire/types.js';

/** A one-shot timer on the clock; setting it again replaces the pending one. */
export class ClockTimer {
  private abort: AbortController | null = null;

  constructor(private readonly clock: Clock) {}

  /** Calls `fn` after `ms` unless cleared or set again first. */
  set(ms: number, fn: () => void): void {
    this.clear();
    const abort = new AbortController();
    this.abort = abort;
    void this.clock.sleep(Math.max(0, ms), abort.signal).then((slept) => {
      if (!slept || this.abort !== abort) return;
      this.abort = null;
      fn();
    });
  }

  /** True while a call is pending. */
  get pending(): boolean {
    return this.abort !== null;
  }

  clear(): void {
    this.abort?.abort();
    this.abort = null;
  }
}

/** Waits `ms` on the clock, or less when `wake` settles first. */
export async function nap(clock: Clock, ms: number, wake?: Promise<unknown>): Promise<void> {
  const abort = new AbortController();
  try {
    await Promise.race([clock.sleep(Math.max(0, ms), abort.signal), ...(wake ? [wake] : [])]);
  } finally {
    abort.abort();
  }
}

/**
 * An instant measured on two clocks: the injected one (wall time, which a
 * suspended VM's wake-up moves on) and, when given, a monotonic one (which an
 * NTP step cannot move back). It has passed once either says so.
 */
export class Deadline {
  private constructor(
    private readonly wall: number,
    private readonly mono: number | null,
    private readonly clock: Clock,
    private readonly monotonic: (() => number) | undefined,
  ) {}

  /** `ms` after the instants `wallAt` and `monoAt` (null: no monotonic clock). */
  static after(
    clock: Clock,
    monotonic: (() => number) | undefined,
    from: { wall: number; mono: number | null },
    ms: number,
  ): Deadline {
    return new Deadline(
      from.wall + ms,
      from.mono === null ? null : from.mono + ms,
      clock,
      monotonic,
    );
  }

  /** A deadline that has passed. */
  static passed(clock: Clock): Deadline {
    return new Deadline(-Infinity, null, clock, undefined);
  }

  /** True once either clock is at or past it. */
  passed(): boolean {
    if (this.clock.now() >= this.wall) return true;
    return this.mono !== null && this.monotonic !== undefined && this.monotonic() >= this.mono;
  }

  /** How long until it passes, by the wall clock (for a timer). */
  leftMs(): number {
    const wall = this.wall - this.clock.now();
    const mono =
      this.mono !== null && this.monotonic !== undefined ? this.mono - this.monotonic() : wall;
    return Math.max(0, Math.min(wall, mono));
  }
}
