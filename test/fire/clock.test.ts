/** The real clock's sleep, on vitest's fake timers: long sleeps, aborts. */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/fire/clock.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it('sleeps past setTimeout’s 24.8-day limit instead of waking at once', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.name);
  process.on('warning', onWarning);
  let woke: boolean | undefined;
  void systemClock.sleep(30 * 86_400_000).then((r) => (woke = r));
  await vi.advanceTimersByTimeAsync(10);
  expect(woke).toBeUndefined();
  await vi.advanceTimersByTimeAsync(2 ** 31);
  expect(woke).toBeUndefined();
  await vi.advanceTimersByTimeAsync(30 * 86_400_000 - 2 ** 31);
  expect(woke).toBe(true);
  process.off('warning', onWarning);
  expect(warnings).not.toContain('TimeoutOverflowWarning');
});

it('an abort ends a long sleep early with false', async () => {
  const controller = new AbortController();
  let woke: boolean | undefined;
  void systemClock.sleep(40 * 86_400_000, controller.signal).then((r) => (woke = r));
  await vi.advanceTimersByTimeAsync(2 ** 31 + 5);
  controller.abort();
  await vi.advanceTimersByTimeAsync(0);
  expect(woke).toBe(false);
});
