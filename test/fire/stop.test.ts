/**
 * The daemon's per-run stop signal (src/fire/stop.ts): what the engine, transports and clocks
 * rely on of an `AbortSignal`, and the real `AbortSignal` made from it on demand.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/fire/clock.js';
import { asAbortSignal, Stop } from '../../src/fire/stop.js';

describe('Stop', () => {
  it('tells each listener once, functions and handleEvent objects alike, and not the removed ones', () => {
    const stop = new Stop();
    const told: string[] = [];
    const a = (): void => void told.push('a');
    const b = { handleEvent: (): void => void told.push('b') };
    const c = (): void => void told.push('c');
    stop.addEventListener('abort', a, { once: true });
    stop.addEventListener('abort', a); // the same listener twice: told once
    stop.addEventListener('abort', b);
    stop.addEventListener('abort', c);
    stop.removeEventListener('abort', c);
    stop.removeEventListener('abort', () => undefined); // never added: nothing happens
    expect(stop.aborted).toBe(false);
    stop.abort();
    stop.abort();
    expect(stop.aborted).toBe(true);
    expect(told).toEqual(['a', 'b']);
  });

  it('adds no listener once aborted (as an AbortSignal does not replay its event)', () => {
    const stop = new Stop();
    stop.abort();
    let told = 0;
    stop.addEventListener('abort', () => void (told += 1));
    stop.abort();
    expect(told).toBe(0);
  });

  it('tells every listener even when one throws, then throws the first error', () => {
    const stop = new Stop();
    const told: number[] = [];
    stop.addEventListener('abort', () => {
      told.push(1);
      throw new Error('first');
    });
    stop.addEventListener('abort', () => {
      told.push(2);
      throw new Error('second');
    });
    stop.addEventListener('abort', () => void told.push(3));
    expect(() => stop.abort()).toThrow('first');
    expect(told).toEqual([1, 2, 3]);
  });

  it('makes a real AbortSignal on demand that aborts with it, or is aborted already', () => {
    const before = new Stop();
    const signal = asAbortSignal(before);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(asAbortSignal(before)).toBe(signal);
    expect(signal.aborted).toBe(false);
    before.abort();
    expect(signal.aborted).toBe(true);

    const after = new Stop();
    after.abort();
    expect(asAbortSignal(after).aborted).toBe(true);

    const any = AbortSignal.any([asAbortSignal(new Stop()), AbortSignal.abort()]);
    expect(any.aborted).toBe(true);
    const plain = new AbortController().signal;
    expect(asAbortSignal(plain)).toBe(plain);
  });

  it("ends the real clock's sleep early, and a sleep that ended leaves no listener behind", async () => {
    const stop = new Stop();
    const sleeping = systemClock.sleep(60_000, stop);
    setTimeout(() => stop.abort(), 20);
    expect(await sleeping).toBe(false); // true only after the whole minute

    const other = new Stop();
    expect(await systemClock.sleep(1, other)).toBe(true);
    // the sleep removed its listener: aborting now tells nobody (a leftover would resolve twice)
    expect((other as unknown as { listeners: unknown[] | null }).listeners).toEqual([]);
  });
});
