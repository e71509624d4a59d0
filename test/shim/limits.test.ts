/**
 * The process limits of `cronix trigger`: the deadline derived from the job's
 * worst case, and the grace after a stop, after which the process is ended
 * with exit 75 and one `stopped` line. On vitest's fake timers, including a
 * whole in-process fire whose transport ignores the stop.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { normalizedJob, shimDirs, writeSpec, dirArgs, TEST_SECRET } from '../helpers/shim.js';
import {
  FireLimits,
  fireBudgetMs,
  FIRE_MARGIN_SECONDS,
  LOCK_ALLOWANCE_SECONDS,
  START_BUDGET_MS,
  STOP_GRACE_MS,
} from '../../src/shim/limits.js';
import { parseLines, recordingTransport, startInProcess } from './in-process.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('fireBudgetMs', () => {
  it.each([
    // attempts × timeout + backoffs + Replace wait + lock allowance per attempt + margin
    [
      {
        concurrency: 'Forbid',
        timeout_seconds: 60,
        retries: { max_attempts: 3, min_seconds: 1, max_seconds: 60 },
      },
      180 + 1 + 2,
    ],
    [
      {
        concurrency: 'Replace',
        timeout_seconds: 4,
        retries: { max_attempts: 1, min_seconds: 1, max_seconds: 1 },
      },
      4 + 5,
    ],
    [
      {
        concurrency: 'Replace',
        timeout_seconds: 600,
        retries: { max_attempts: 2, min_seconds: 5, max_seconds: 5 },
      },
      1200 + 5 + 300,
    ],
  ] as const)('%j', (policy, fireSeconds) => {
    const attempts = policy.retries.max_attempts;
    expect(fireBudgetMs({ concurrency_scope: 'host', ...policy })).toBe(
      (fireSeconds + attempts * LOCK_ALLOWANCE_SECONDS + FIRE_MARGIN_SECONDS) * 1000,
    );
  });
});

describe('fireBudgetMs of a command job', () => {
  it('adds the graceful stop to every attempt and to the Replace wait', () => {
    const policy = {
      concurrency: 'Replace',
      concurrency_scope: 'host',
      timeout_seconds: 10,
      retries: { max_attempts: 2, min_seconds: 3, max_seconds: 3 },
    } as const;
    const base = fireBudgetMs(policy);
    expect(fireBudgetMs(policy, 7) - base).toBe((2 * 7 + 7) * 1000);
  });
});

describe('FireLimits', () => {
  it('a command job extends the stop grace by its graceful stop', () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    const limits = new FireLimits({ exit: (c) => void exits.push(c) });
    limits.extendStopGrace(10_000);
    limits.stop('signal');
    vi.advanceTimersByTime(STOP_GRACE_MS + 10_000 - 1);
    expect(exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(exits).toEqual([75]);
  });

  it('the deadline stops the fire; a fire that does not end within the grace is exited with 75', () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    const forced: string[] = [];
    const limits = new FireLimits({
      exit: (c) => void exits.push(c),
      onForcedStop: (r) => void forced.push(r),
    });
    limits.deadlineIn(1000);
    vi.advanceTimersByTime(999);
    expect(limits.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limits.signal.aborted).toBe(true);
    expect(limits.reason).toBe('deadline');
    vi.advanceTimersByTime(STOP_GRACE_MS - 1);
    expect(exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(forced).toEqual(['deadline']);
    expect(exits).toEqual([75]);
  });

  it('a deadline beyond 24.8 days does not fire early', () => {
    vi.useFakeTimers();
    const limits = new FireLimits({ exit: () => undefined });
    limits.deadlineIn(40 * 86_400_000);
    vi.advanceTimersByTime(2 ** 31 + 1000);
    expect(limits.signal.aborted).toBe(false);
    vi.advanceTimersByTime(40 * 86_400_000);
    expect(limits.signal.aborted).toBe(true);
    limits.dispose();
  });

  it('a stop after which the fire ends in time exits nothing; dispose disarms everything', () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    const limits = new FireLimits({ exit: (c) => void exits.push(c) });
    limits.deadlineIn(START_BUDGET_MS);
    limits.stop('signal');
    limits.stop('deadline'); // the first reason stays
    expect(limits.reason).toBe('signal');
    limits.dispose();
    vi.advanceTimersByTime(START_BUDGET_MS + STOP_GRACE_MS);
    expect(exits).toEqual([]);
  });
});

describe('a whole fire in-process', () => {
  it('a transport that ignores the stop: SIGTERM → exit(75) after the grace, one stopped line', async () => {
    const dirs = shimDirs('cronix-limits-');
    writeSpec(
      dirs.specDir,
      'app',
      normalizedJob('app', {
        name: 'job',
        schedule: '@hourly',
        request: { url: 'http://127.0.0.1:9/x' },
      }),
    );
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const stuck = recordingTransport(() => new Promise(() => undefined)); // ignores every abort
    const child = startInProcess(['app.job', ...dirArgs(dirs)], {
      env: { CRON_SECRET: TEST_SECRET },
      transport: stuck,
    });
    // the fire gets to its request through real I/O (spec file, dynamic imports, flock)
    await vi.waitFor(() => expect(stuck.sent).toHaveLength(1), { timeout: 20_000, interval: 20 });
    expect(child.exits).toEqual([]);
    child.signals.emit('SIGTERM');
    await vi.advanceTimersByTimeAsync(STOP_GRACE_MS - 10);
    expect(child.exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(20);
    expect(child.exits).toEqual([75]);
    const lines = parseLines(child.raw);
    expect(lines.map((l) => l['event'])).toEqual(['fire-start', 'attempt', 'stopped']);
    expect(lines.at(-1)).toMatchObject({ level: 'warn' });
    expect(String(lines.at(-1)?.['msg'])).toMatch(/did not stop within 5s of the signal/);
  });
});
