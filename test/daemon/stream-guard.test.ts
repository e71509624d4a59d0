/**
 * The stream guard (`src/http/stream-guard.ts`) on its own: a re-check ends exactly the streams
 * whose credential no longer holds, once each; a credential check that throws ends nothing; a
 * re-check asked for during a pass runs one more pass after it; its timer runs only while a
 * stream is watched and ends a stream by itself.
 */
import { describe, expect, it } from 'vitest';
import { StreamGuard } from '../../src/http/stream-guard.js';
import { until } from '../helpers/common.js';

describe('StreamGuard', () => {
  it('ends the streams whose credential no longer holds, once, and keeps the others', async () => {
    const guard = new StreamGuard(60_000);
    const live = { a: true, b: true, c: true };
    const ended: string[] = [];
    for (const k of ['a', 'b', 'c'] as const)
      guard.watch(
        () => Promise.resolve(live[k]),
        () => ended.push(k),
      );
    await guard.recheck();
    expect(ended).toEqual([]);
    live.b = false;
    await guard.recheck();
    await guard.recheck();
    expect(ended).toEqual(['b']);
    expect(guard.size).toBe(2);
  });

  it('a check that throws ends nothing; an unwatched stream is not asked', async () => {
    const guard = new StreamGuard(60_000);
    const ended: string[] = [];
    let asked = 0;
    guard.watch(
      () => Promise.reject(new Error('store down')),
      () => ended.push('failing'),
    );
    const unwatch = guard.watch(
      () => ((asked += 1), Promise.resolve(false)),
      () => ended.push('gone'),
    );
    unwatch();
    await guard.recheck();
    expect(ended).toEqual([]);
    expect(asked).toBe(0);
    expect(guard.size).toBe(1);
  });

  it('a re-check asked during a pass runs another pass after it', async () => {
    const guard = new StreamGuard(60_000);
    let holds = true;
    let release: () => void = () => undefined;
    let calls = 0;
    const ended: string[] = [];
    guard.watch(
      async () => {
        calls += 1;
        const answer = holds; // read before the revocation
        if (calls === 1) await new Promise<void>((r) => (release = r));
        return answer;
      },
      () => ended.push('s'),
    );
    const first = guard.recheck();
    holds = false; // revoked while the first pass waits on its stale answer
    const second = guard.recheck();
    release();
    await Promise.all([first, second]);
    expect(calls).toBe(2);
    expect(ended).toEqual(['s']);
  });

  it('its timer ends a stream by itself, and stops once nothing is watched', async () => {
    const guard = new StreamGuard(20);
    let holds = true;
    let ended = false;
    guard.watch(
      () => Promise.resolve(holds),
      () => (ended = true),
    );
    holds = false;
    await until(() => ended || undefined, 5_000);
    expect(guard.size).toBe(0);
    expect((guard as unknown as { timer: unknown }).timer).toBeUndefined();
  });
});
