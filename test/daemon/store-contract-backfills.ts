/**
 * The store contract's part for backfills (SPEC §16): registered inside `storeContract`, so
 * both stores run it. A backfill is created with its plan, its items link to runs in the
 * transaction that records them, its progress is counted from those runs, and it ends once.
 */
import { expect, it } from 'vitest';
import type { BackfillItemSpec, Store } from '../../src/daemon/store/types.js';
import { newRun, T0 } from './store-fixtures.js';

const spec = {
  app: 'billing',
  job: 'settle',
  from: T0,
  to: T0 + 10 * 60_000,
  onlyMissing: false,
  parallel: 2,
  stopAfterFailures: 3,
};

function items(n: number, tag: string): BackfillItemSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    position: i,
    scheduledTime: T0 + i * 60_000,
    scheduleIndex: 0,
    runKey: `billing/settle#${tag}-${i}`,
  }));
}

/** Registers the backfill tests (call inside the contract's describe). */
export function backfillContract(getStore: () => Store): void {
  it('backfills: created with their plan, linked runs counted, ended once, listed newest first', async () => {
    const store = getStore();
    const plan = items(6, 'a');
    const [created] = await store.write([
      {
        kind: 'backfill-create',
        backfill: { ...spec, id: 'bf-a', createdBy: 'cli', createdAt: T0 },
        items: plan,
      },
    ]);
    expect(created).toEqual({ kind: 'ok' });
    const outcomes = ['success', 'retries_exhausted', 'crashed', 'duplicate', null] as const;
    for (const [i, outcome] of outcomes.entries()) {
      const run = newRun({
        runKey: plan[i]!.runKey,
        scheduledTime: plan[i]!.scheduledTime,
        trigger: 'backfill',
        phase: outcome === null ? 'running' : 'ended',
        outcome,
        startedAt: T0,
        endedAt: outcome === null ? null : T0,
      });
      const res = await store.write([
        { kind: 'insert', run },
        { kind: 'backfill-link', backfillId: 'bf-a', position: i, runId: run.id },
      ]);
      expect(res[1]).toEqual({ kind: 'ok' });
    }
    const b = await store.getBackfill('bf-a');
    expect(b).toMatchObject({
      ...spec,
      id: 'bf-a',
      state: 'running',
      total: 6,
      createdBy: 'cli',
      createdAt: T0,
      endedAt: null,
      reason: null,
      // the crashed item and the one never handed out are pending
      counts: { pending: 2, active: 1, succeeded: 1, failed: 1, other: 1 },
    });
    const got = await store.backfillItems('bf-a');
    expect(got.map((i) => [i.position, i.runKey, i.outcome])).toEqual([
      [0, plan[0]!.runKey, 'success'],
      [1, plan[1]!.runKey, 'retries_exhausted'],
      [2, plan[2]!.runKey, 'crashed'],
      [3, plan[3]!.runKey, 'duplicate'],
      [4, plan[4]!.runKey, null],
      [5, plan[5]!.runKey, null],
    ]);
    expect(got[5]!.runId).toBeNull();
    expect(got[4]!.phase).toBe('running');

    await store.write([
      {
        kind: 'backfill-create',
        backfill: { ...spec, id: 'bf-b', job: 'other', createdBy: 'ops', createdAt: T0 + 1 },
        items: [],
      },
    ]);
    const end = await store.write([
      { kind: 'backfill-end', id: 'bf-a', state: 'stopped', reason: 'enough', endedAt: T0 + 5 },
      { kind: 'backfill-end', id: 'bf-a', state: 'done', reason: null, endedAt: T0 + 6 },
      { kind: 'backfill-link', backfillId: 'bf-a', position: 5, runId: 'late' },
    ]);
    expect(end.map((r) => r.kind)).toEqual(['ok', 'gone', 'gone']);
    expect(await store.getBackfill('bf-a')).toMatchObject({
      state: 'stopped',
      reason: 'enough',
      endedAt: T0 + 5,
    });
    expect((await store.listBackfills({})).map((x) => x.id)).toEqual(['bf-b', 'bf-a']);
    expect((await store.listBackfills({ job: 'settle' })).map((x) => x.id)).toEqual(['bf-a']);
    expect((await store.listBackfills({ state: 'running' })).map((x) => x.id)).toEqual(['bf-b']);
    expect(await store.getBackfill('missing')).toBeNull();
  });

  it('backfill plans: succeeded keys and instants that ran, in one query each', async () => {
    const store = getStore();
    const runs = [
      newRun({ runKey: 'k-ok', phase: 'ended', outcome: 'success', endedAt: T0 }),
      newRun({ runKey: 'k-fail', phase: 'ended', outcome: 'app_rejected', endedAt: T0 }),
      newRun({ runKey: 'k-missed', phase: 'ended', outcome: 'missed', endedAt: T0 }),
      newRun({ runKey: 'k-run', phase: 'running', startedAt: T0 }),
    ];
    await store.write(runs.map((run) => ({ kind: 'insert' as const, run })));
    expect(await store.succeededKeys(['k-ok', 'k-fail', 'k-missed', 'k-run', 'nope'])).toEqual(
      new Set(['k-ok']),
    );
    expect(await store.succeededKeys([])).toEqual(new Set());
    const ran = await store.ranInstants('billing', 'settle', 0, Number.MAX_SAFE_INTEGER);
    expect(ran).toEqual(new Set([runs[0]!.scheduledTime, runs[1]!.scheduledTime]));
    expect(await store.ranInstants('billing', 'settle', 0, runs[0]!.scheduledTime)).toEqual(
      new Set(),
    );
  });
}
