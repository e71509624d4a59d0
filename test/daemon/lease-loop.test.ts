/**
 * The lease loop's turns on a manual clock (SPEC §10): a standby tries to take the lease every
 * TTL/3 from the start of one turn to the start of the next, however long its chores take, so a
 * frozen leader's lease is taken within TTL + TTL/3. The HA chaos test once measured 6.0 s for a
 * TTL of 3 s when a turn's next one was counted from its end.
 */
import { expect, it } from 'vitest';
import { LeaseLoop } from '../../src/daemon/cluster/lease-loop.js';
import { DaemonEmitter } from '../../src/daemon/events.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import type { Coordination, Lease } from '../../src/daemon/store/coordination.js';
import { ManualClock } from '../helpers/manual-clock.js';

const TTL = 3000;

/** A standby whose lease another replica holds, whose chores take `choresMs`; its tries. */
function standby(choresMs: number): { clock: ManualClock; tries: number[]; loop: LeaseLoop } {
  const clock = new ManualClock(Date.UTC(2026, 10, 27, 12, 0));
  const t0 = clock.now();
  const tries: number[] = [];
  const other: Lease = {
    replica: 'other',
    incarnation: 'x',
    epoch: 7,
    expiresAt: t0 + 60_000,
    acquiredAt: t0,
    previousExpiresAt: null,
    storeNow: t0,
  };
  const coordination = {
    acquireLease: async () => {
      tries.push(clock.now() - t0);
      return { won: false, lease: other };
    },
    readLease: async () => other,
    releaseLease: async () => false,
    touchReplica: async () => undefined,
    storeNow: async () => clock.now(),
  } as unknown as Coordination;
  const loop = new LeaseLoop(
    {
      coordination,
      replicaId: 'me',
      leaseMs: TTL,
      clock,
      events: new DaemonEmitter(),
      metrics: new DaemonMetrics(() => clock.now()),
    },
    {
      began: () => undefined,
      ended: () => undefined,
      chores: async () => void (await clock.sleep(choresMs)),
    },
  );
  return { clock, tries, loop };
}

/** Stops the loop: the turn under way ends once its chores' sleep does. */
async function stop({ clock, loop }: { clock: ManualClock; loop: LeaseLoop }): Promise<void> {
  const stopping = loop.stop();
  await clock.advance(2000);
  await stopping;
}

it("a standby's turns start TTL/3 apart while its chores take most of that", async () => {
  // a standby's views read slowly: 800 of the turn's 1,000 ms
  const s = standby(800);
  s.loop.start();
  for (let i = 0; i < 50; i++) await s.clock.advance(100);
  expect(s.tries).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
  await stop(s);
});

it('a turn longer than TTL/3 is followed by the next one after a short gap, not TTL/3 later', async () => {
  const s = standby(1500);
  s.loop.start();
  for (let i = 0; i < 40; i++) await s.clock.advance(100);
  // each turn: 1,500 ms of chores, then 50 ms (the least gap) before the next
  expect(s.tries).toEqual([0, 1550, 3100]);
  await stop(s);
});
