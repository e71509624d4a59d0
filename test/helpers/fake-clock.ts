import type { Clock } from '../../src/fire/types.js';

/** A clock whose sleeps complete at once and advance time; records every sleep. */
export class FakeClock implements Clock {
  t: number;
  readonly sleeps: number[] = [];
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return false;
    this.sleeps.push(ms);
    this.t += ms;
    return true;
  }
}
