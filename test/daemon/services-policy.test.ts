/** The supervisor's pure decisions (SPEC §17), table-tested: backoff, crash loop, reload plan, exits. */
import { describe, expect, it } from 'vitest';
import {
  exitOutcome,
  NO_CRASH_LOOP,
  onExit,
  onSettled,
  planReload,
  restartDelayMs,
  type CrashLoopState,
} from '../../src/daemon/services/policy.js';

describe('restart backoff', () => {
  it.each([
    [1, 1, 60, 1000],
    [2, 1, 60, 2000],
    [3, 1, 60, 4000],
    [7, 1, 60, 60_000],
    [1000, 1, 60, 60_000],
    [3, 0, 60, 0],
    [1, 5, 5, 5000],
    [4, 2, 10, 10_000],
  ])('exit %i in a row, min %i, max %i → %i ms', (n, min, max, ms) => {
    expect(restartDelayMs(n, { min_seconds: min, max_seconds: max })).toBe(ms);
  });
});

describe('crash loop', () => {
  const rule = { crash_loop_exits: 3, crash_loop_window_seconds: 60 };
  const run = (steps: ([number, number] | ['stable', number] | ['gone', number])[]) => {
    let state: CrashLoopState = NO_CRASH_LOOP;
    const events: string[] = [];
    for (const [what, arg] of steps.map((s) => [s[0], s[1]] as const)) {
      const step =
        typeof what === 'number'
          ? onExit(state, what, arg as number, rule)
          : onSettled(state, arg as number, what === 'stable');
      state = step.state;
      if (step.event) events.push(step.event);
    }
    return { events, looping: [...state.looping] };
  };

  it('is 3 exits of one instance within 60 s: failed once, recovered once when it is stable', () => {
    expect(
      run([
        [0, 0],
        [0, 1000],
        [0, 3000],
      ]),
    ).toEqual({ events: ['failed'], looping: [0] });
    expect(
      run([
        [0, 0],
        [0, 1000],
        [0, 3000],
        [0, 7000],
        [0, 15000],
      ]).events,
    ).toEqual(['failed']);
    expect(
      run([
        [0, 0],
        [0, 1000],
        [0, 3000],
        ['stable', 0],
      ]),
    ).toEqual({
      events: ['failed', 'recovered'],
      looping: [],
    });
  });

  it('counts only the window, and each instance on its own', () => {
    expect(
      run([
        [0, 0],
        [0, 30_000],
        [0, 61_000],
      ]).events,
    ).toEqual([]);
    expect(
      run([
        [0, 0],
        [1, 100],
        [2, 200],
      ]).events,
    ).toEqual([]);
  });

  it('fails once for the service while several loop; recovers when the last one is stable', () => {
    const loops: [number, number][] = [0, 1].flatMap((i) => [
      [i, 0] as [number, number],
      [i, 1] as [number, number],
      [i, 2] as [number, number],
    ]);
    expect(run([...loops, ['stable', 0]])).toEqual({ events: ['failed'], looping: [1] });
    expect(run([...loops, ['stable', 0], ['stable', 1]]).events).toEqual(['failed', 'recovered']);
    // an instance taken away (stopped, removed) recovers nothing
    expect(
      run([
        [0, 0],
        [0, 1],
        [0, 2],
        ['gone', 0],
      ]),
    ).toEqual({ events: ['failed'], looping: [] });
  });
});

describe('reload plan', () => {
  it.each([
    ['unchanged', { instances: 2, shape: 'a' }, { instances: 2, shape: 'a' }, ['keep', 'keep']],
    ['changed', { instances: 2, shape: 'a' }, { instances: 2, shape: 'b' }, ['restart', 'restart']],
    [
      'more',
      { instances: 1, shape: 'a' },
      { instances: 3, shape: 'a' },
      ['keep', 'start', 'start'],
    ],
    ['fewer', { instances: 3, shape: 'a' }, { instances: 1, shape: 'a' }, ['keep', 'stop', 'stop']],
    [
      'fewer, changed',
      { instances: 2, shape: 'a' },
      { instances: 1, shape: 'b' },
      ['restart', 'stop'],
    ],
    ['new', null, { instances: 2, shape: 'a' }, ['start', 'start']],
    ['removed', { instances: 2, shape: 'a' }, null, ['stop', 'stop']],
  ] as const)('%s', (_name, old, next, actions) => {
    expect(planReload(old, next)).toEqual(actions);
  });
});

describe('exit outcomes', () => {
  it.each([
    [{ kind: 'exit', code: 0, signal: null }, 'success', null],
    [{ kind: 'exit', code: 3, signal: null }, 'crashed', 'exit code 3'],
    [{ kind: 'exit', code: null, signal: 'SIGKILL' }, 'crashed', 'killed by signal SIGKILL'],
    [
      { kind: 'exit', code: 127, signal: null },
      'crashed',
      'exit code 127 (the program could not be found; see the output)',
    ],
    [
      { kind: 'spawn-error', message: 'cannot run "x": no such file' },
      'crashed',
      'cannot run "x": no such file',
    ],
    [{ kind: 'stopped', reason: 'stopped by an operator' }, 'stopped', 'stopped by an operator'],
  ] as const)('%j → %s', (exit, outcome, error) => {
    expect(exitOutcome(exit)).toEqual({ outcome, error });
  });
});
