/** The pure parts of notifications: grouping, retry timing, and the line of text. */
import { describe, expect, it } from 'vitest';
import { DELIVERY_HORIZON_MS, nextAttemptAt, parseRetryAfter } from '../../src/notify/backoff.js';
import { CLOSED, onProblem, onSuccess, type GroupState } from '../../src/notify/group.js';
import { notifyText } from '../../src/notify/message.js';

describe('grouping', () => {
  it('first problem at once, then at most one message per interval with the count, then recovery', () => {
    const repeat = 60_000;
    let s: GroupState = CLOSED;
    const sent: [number, number][] = [];
    for (const at of [0, 10_000, 20_000, 59_999, 60_000, 61_000, 200_000]) {
      const d = onProblem(s, at, repeat, true);
      if (d.send) sent.push([at, d.count]);
      s = d.next;
    }
    expect(sent).toEqual([
      [0, 1],
      [60_000, 4],
      [200_000, 2],
    ]);
    expect(onSuccess([s], true)).toEqual({ send: true, count: 7, recovered: true });
    expect(onSuccess([CLOSED], true)).toEqual({ send: false, count: 0, recovered: false });
  });

  it('a notifier that did not ask for failures still hears of the recovery', () => {
    const d = onProblem(CLOSED, 0, 1000, false);
    expect(d.send).toBe(false);
    expect(onSuccess([d.next], true)).toEqual({ send: true, count: 1, recovered: true });
  });
});

describe('retry timing', () => {
  it.each([
    ['5', 5000],
    [' 0 ', 0],
    ['Wed, 21 Oct 2015 07:28:10 GMT', 10_000],
    ['soon', null],
    [undefined, null],
  ])('Retry-After %j → %j ms', (value, ms) => {
    expect(parseRetryAfter(value, Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(ms);
  });

  it('backs off 1, 2, 4 … 60 s, honours Retry-After, gives up past 10 minutes', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => nextAttemptAt(0, n, 0, null));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect(nextAttemptAt(0, 1, 1000, 30_000)).toBe(31_000);
    expect(nextAttemptAt(0, 9, DELIVERY_HORIZON_MS - 10_000, null)).toBeNull();
    expect(nextAttemptAt(0, 1, 0, DELIVERY_HORIZON_MS + 1)).toBeNull();
  });
});

it('the text is one line and names the job', () => {
  const run = {
    id: 'r1',
    runKey: 'k',
    trigger: 'schedule',
    scheduledTime: Date.UTC(2026, 0, 1),
    startedAt: null,
    endedAt: null,
    outcome: 'retries_exhausted',
    attempts: 3,
    lastStatus: 503,
    error: 'HTTP 503\nsecond line',
  };
  expect(notifyText('failed', 'a', 'j', run, 2)).toBe(
    'cronix: a/j failed: retries_exhausted (HTTP 503 second line) (2 times since the last message); run r1',
  );
  expect(notifyText('missed', 'a', 'j', { ...run, error: null }, 1)).toBe(
    'cronix: a/j missed the fire of 2026-01-01T00:00:00Z',
  );
});
