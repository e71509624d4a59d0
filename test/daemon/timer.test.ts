/**
 * The timer loop's sleep is measured from the time after a turn's housekeeping: a slow
 * `onTurn` (an hourly prune) must not push the next fire past its instant.
 */
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/events.js';
import { TimerLoop, type TimerItem } from '../../src/daemon/timer.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

describe('TimerLoop', () => {
  it('hands a fire over at its instant even when the turn before it took (clock) time', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 0));
    const handed: number[] = [];
    let slowTurns = 1;
    let releaseTurn: (() => void) | undefined;
    const loop = new TimerLoop(clock, new DaemonEmitter(), {
      async onDue(now, items: TimerItem[]) {
        for (const _ of items) handed.push(now);
      },
      // the first turn's housekeeping is still running while the clock moves 15 s
      onTurn: () =>
        slowTurns-- > 0 ? new Promise<void>((r) => (releaseTurn = r)) : Promise.resolve(),
    });
    const at = Date.UTC(2026, 0, 1, 0, 0, 20);
    loop.push({ at, kind: 'thaw' });
    loop.start();
    await settle();
    await clock.advance(15_000); // no sleeper yet: the loop is inside onTurn
    releaseTurn?.();
    await settle();
    await clock.advance(5_000); // to 00:00:20, the item's instant (a stale sleep: 00:00:35)
    await settle();
    await loop.stop();
    expect(handed).toEqual([at]);
  });
});
