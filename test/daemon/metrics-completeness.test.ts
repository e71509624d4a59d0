/**
 * The completeness gauge (SPEC §7): succeeded scheduled runs ÷ expected fires per job over the
 * last 24 hours, from hourly slots that all jobs share in one array.
 */
import { expect, it } from 'vitest';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import type { RunRecord } from '../../src/daemon/store/types.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 27, 10, 0);

/** A scheduled run that ended with `outcome` (the fields the metrics read). */
const ended = (scheduledTime: number, outcome: RunRecord['outcome']): RunRecord =>
  ({
    outcome,
    trigger: 'schedule',
    scheduleIndex: 0,
    scheduledTime,
    startedAt: scheduledTime,
    endedAt: scheduledTime + 10,
    outputLost: null,
  }) as unknown as RunRecord;

/** The gauge's value per job, as scraped. */
async function ratios(m: DaemonMetrics): Promise<Map<string, number>> {
  const text = await m.registry.metrics();
  const out = new Map<string, number>();
  for (const [, job, value] of text.matchAll(/^cronix_run_completeness\{job="([^"]+)"\} (\S+)$/gm))
    out.set(job as string, Number(value));
  return out;
}

it('per job over the last 24 h: many jobs, hours rolling out of the window, capped at 1', async () => {
  let now = T0;
  const m = new DaemonMetrics(() => now);
  // the first row made: a failure in hour 0 before the array grows, a success in hour 2 after
  m.expected('a/first', T0);
  m.runEnded('a/first', ended(T0, 'retries_exhausted'));
  // 300 jobs (the shared array grows past its first 64): job i expects 4 fires an hour for
  // 3 hours and i % 5 of them succeed each hour
  for (let h = 0; h < 3; h++)
    for (let i = 0; i < 300; i++)
      for (let f = 0; f < 4; f++) {
        const at = T0 + h * HOUR + f * 900_000;
        m.expected(`a/j${i}`, at);
        if (f < i % 5) m.runEnded(`a/j${i}`, ended(at, 'success'));
      }
  // a failure is an expected fire that did not succeed; a success with no expected fire gives
  // the job no value; more successes than expected fires count as all of them
  m.runEnded('a/j0', ended(T0, 'retries_exhausted'));
  m.runEnded('b/only-success', ended(T0, 'success'));
  m.expected('c/over', T0);
  m.runEnded('c/over', ended(T0, 'success'));
  m.runEnded('c/over', ended(T0, 'success'));
  m.expected('a/first', T0 + 2 * HOUR);
  m.runEnded('a/first', ended(T0 + 2 * HOUR, 'success'));
  now = T0 + 3 * HOUR;
  let r = await ratios(m);
  expect(r.size).toBe(302); // b/only-success has nothing expected: no value
  expect(r.get('a/first')).toBe(1 / 2); // its hour 0 survived the array's growths
  for (const i of [0, 1, 63, 64, 65, 199, 299])
    expect(r.get(`a/j${i}`)).toBe(Math.min(4, i % 5) / 4);
  expect(r.get('c/over')).toBe(1);

  // 24 h after the first hour, that hour has left the window; one more hour, the second
  now = T0 + 24 * HOUR + 1;
  m.expected('a/j4', T0 + 24 * HOUR); // the slot of hour 0, now holding hour 24
  m.runEnded('a/j4', ended(T0 + 24 * HOUR, 'success'));
  r = await ratios(m);
  expect(r.get('a/j1')).toBe(1 / 4); // hours 1 and 2 left: 2 of 8
  expect(r.get('a/j4')).toBe(1); // 8 of 8 from hours 1 and 2, 1 of 1 from hour 24
  expect(r.has('c/over')).toBe(false); // all its fires were in hour 0

  // a late fire for an hour whose slot already holds a newer hour is outside the window: it
  // neither counts nor clears the newer hour
  m.expected('a/j2', T0 + 24 * HOUR);
  m.runEnded('a/j2', ended(T0 + 24 * HOUR, 'success'));
  expect((await ratios(m)).get('a/j2')).toBe(5 / 9); // 4 of 8, and 1 of 1
  m.expected('a/j2', T0);
  m.runEnded('a/j2', ended(T0, 'retries_exhausted'));
  expect((await ratios(m)).get('a/j2')).toBe(5 / 9);

  now = T0 + 30 * HOUR;
  r = await ratios(m);
  expect([...r.keys()].sort()).toEqual(['a/j2', 'a/j4']); // only hour 24 is inside the window
});
