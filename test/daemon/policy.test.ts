import { describe, expect, it } from 'vitest';
import {
  admit,
  jitterMs,
  ledgerOutcome,
  selectCatchup,
  type OverlapPolicy,
} from '../../src/daemon/policy.js';

const p = (
  concurrency: OverlapPolicy['concurrency'],
  maxConcurrent = 1,
  queueMax = 2,
): OverlapPolicy => ({ concurrency, maxConcurrent, queueMax });

describe('admit', () => {
  it.each([
    [p('Allow'), 0, 0, 'start'],
    [p('Allow'), 5, 0, 'start'],
    [p('Forbid'), 0, 0, 'start'],
    [p('Forbid'), 1, 0, 'skip'],
    [p('Forbid', 3), 2, 0, 'start'],
    [p('Forbid', 3), 3, 0, 'skip'],
    [p('Replace'), 0, 0, 'start'],
    [p('Replace'), 1, 0, 'replace'],
    [p('Enqueue'), 0, 0, 'start'],
    [p('Enqueue'), 1, 0, 'queue'],
    [p('Enqueue'), 1, 1, 'queue'],
    [p('Enqueue'), 1, 2, 'queue_full'],
    [p('Enqueue', 1, 0), 1, 0, 'queue_full'],
    // a free slot while a backlog waits: newcomers go behind the backlog (FIFO)
    [p('Enqueue'), 0, 1, 'queue'],
  ] as const)('%j active=%i queued=%i → %s', (policy, active, queued, expected) => {
    expect(admit(policy, active, queued)).toBe(expected);
  });
});

describe('selectCatchup', () => {
  const now = 10_000_000;
  const missed = [
    now - 5 * 60_000,
    now - 4 * 60_000,
    now - 3 * 60_000,
    now - 2 * 60_000,
    now - 60_000,
  ];
  it('none: everything is missed', () => {
    expect(selectCatchup(missed, now, { mode: 'none', windowSeconds: null, maxRuns: 100 })).toEqual(
      { run: [], missed },
    );
  });
  it('latest: runs only the newest', () => {
    expect(
      selectCatchup(missed, now, { mode: 'latest', windowSeconds: null, maxRuns: 100 }),
    ).toEqual({ run: [now - 60_000], missed: missed.slice(0, 4) });
  });
  it('all: runs the newest max_runs in order, the rest missed', () => {
    expect(selectCatchup(missed, now, { mode: 'all', windowSeconds: null, maxRuns: 3 })).toEqual({
      run: missed.slice(2),
      missed: missed.slice(0, 2),
    });
  });
  it('the window excludes older fires', () => {
    expect(selectCatchup(missed, now, { mode: 'all', windowSeconds: 150, maxRuns: 100 })).toEqual({
      run: missed.slice(3),
      missed: missed.slice(0, 3),
    });
    expect(selectCatchup(missed, now, { mode: 'latest', windowSeconds: 30, maxRuns: 100 })).toEqual(
      { run: [], missed },
    );
  });
});

describe('jitter', () => {
  const ref = { app: 'a', job: 'j', scheduleIndex: 0 };
  it('is stable per job and within bounds', () => {
    const a = jitterMs(ref, 60, 0, 0.5, 0, null);
    expect(jitterMs(ref, 60, 0, 0.9, 0, null)).toBe(a);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThanOrEqual(60_000);
    expect(jitterMs({ ...ref, job: 'k' }, 60, 0, 0.5, 0, null)).not.toBe(a);
  });
  it('adds the random part', () => {
    expect(jitterMs(ref, 0, 10, 0.5, 0, null)).toBe(5000);
  });
  it('never reaches the next nominal fire', () => {
    expect(jitterMs(ref, 0, 3600, 0.99, 0, 60_000)).toBe(59_000);
  });
});

it('maps engine outcomes to ledger outcomes', () => {
  expect(ledgerOutcome('app-rejected')).toBe('app_rejected');
  expect(ledgerOutcome('retries-exhausted')).toBe('retries_exhausted');
  expect(ledgerOutcome('stopped')).toBe('stopped');
});
