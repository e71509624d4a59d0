/**
 * The store contract's part for freezes, pause notes and idempotency keys (SPEC §16): registered inside
 * `storeContract`, so both stores run it.
 */
import { expect, it } from 'vitest';
import type { FreezeRecord } from '../../src/daemon/store/freeze-types.js';
import type { Store } from '../../src/daemon/store/types.js';
import { newRun, T0 } from './store-fixtures.js';

/** Registers the freeze tests (call inside the contract's describe). */
export function freezeContract(getStore: () => Store): void {
  it('freezes: one per scope, widest first, replaced by a second freeze of the scope, removed by exactly its scope', async () => {
    const store = getStore();
    expect(await store.freezes()).toEqual([]);
    const job: FreezeRecord = {
      app: 'billing',
      job: 'settle',
      reason: 'dupes',
      by: 'cli',
      since: T0,
      until: T0 + 60_000,
    };
    const app: FreezeRecord = { ...job, job: null, reason: 'app wide', until: null };
    const all: FreezeRecord = { ...app, app: null, reason: 'everything', by: 'ui' };
    await store.setFreeze(job);
    await store.setFreeze(app);
    await store.setFreeze(all);
    expect(await store.freezes()).toEqual([all, app, job]);
    const again = { ...job, reason: 'still dupes', by: 'api', since: T0 + 5 };
    await store.setFreeze(again);
    expect(await store.freezes()).toEqual([all, app, again]);
    expect(await store.removeFreeze('billing', null)).toEqual(app);
    expect(await store.removeFreeze('billing', null)).toBeNull();
    expect(await store.removeFreeze(null, null)).toEqual(all);
    expect(await store.freezes()).toEqual([again]);
  });

  it('pause notes: a pause with a note keeps why, who and since; a second pause replaces it; resume forgets it', async () => {
    const store = getStore();
    await store.setPaused('billing', 'settle', true, { reason: 'migration', by: 'cli', since: T0 });
    await store.setPaused('crm', 'sync', true); // no note
    expect(await store.pausedJobs()).toEqual(new Set(['billing/settle', 'crm/sync']));
    expect(await store.pauseNotes()).toEqual(
      new Map([
        ['billing/settle', { reason: 'migration', by: 'cli', since: T0 }],
        ['crm/sync', { reason: null, by: null, since: null }],
      ]),
    );
    await store.setPaused('billing', 'settle', true, { reason: 'longer', by: 'ui', since: T0 + 1 });
    expect((await store.pauseNotes()).get('billing/settle')).toEqual({
      reason: 'longer',
      by: 'ui',
      since: T0 + 1,
    });
    await store.setPaused('billing', 'settle', false);
    expect([...(await store.pauseNotes()).keys()]).toEqual(['crm/sync']);
  });
}

/** Registers the idempotency-key tests (call inside the contract's describe). */
export function idempotencyContract(getStore: () => Store): void {
  it('idempotency keys: written with the run, the first one kept, looked up within the ttl, older ones dropped', async () => {
    const store = getStore();
    const run = newRun({ app: 'billing', job: 'settle', trigger: 'manual' });
    const op = (key: string, runId: string, at: number) => ({
      kind: 'idempotency-key' as const,
      app: 'billing',
      job: 'settle',
      key,
      runId,
      admission: 'started' as const,
      at,
      ttlMs: 1000,
    });
    const res = await store.write([{ kind: 'insert', run }, op('k1', run.id, T0)]);
    expect(res.map((r) => r.kind)).toEqual(['recorded', 'ok']);
    await store.write([op('k1', 'another-run', T0 + 10)]); // the first one stays
    expect(await store.idempotentRun('billing', 'settle', 'k1', T0 - 1000)).toEqual({
      runId: run.id,
      admission: 'started',
      at: T0,
    });
    expect(await store.idempotentRun('billing', 'other', 'k1', T0 - 1000)).toBeNull();
    expect(await store.idempotentRun('billing', 'settle', 'k1', T0 + 1)).toBeNull(); // too old
    // a key written after the ttl drops the old ones, and the old key can name a new run
    await store.write([op('k2', 'run-2', T0 + 5000)]);
    await store.write([op('k1', 'run-3', T0 + 5001)]);
    expect((await store.idempotentRun('billing', 'settle', 'k1', 0))?.runId).toBe('run-3');
  });
}

/** Registers the skip tests (call inside the contract's describe). */
export function skipContract(getStore: () => Store): void {
  it('skips: one per job and instant (the first is kept), listed by job and instant, consumed in the group that records the skipped fire', async () => {
    const store = getStore();
    expect(await store.skips()).toEqual([]);
    const a = { app: 'billing', job: 'settle', at: T0 + 3_600_000, by: 'cli', since: T0 };
    const b = { ...a, at: T0 + 60_000, by: 'ui' };
    const c = { ...a, job: 'audit', by: 'api' };
    await store.addSkip(a);
    await store.addSkip(b);
    await store.addSkip(c);
    await store.addSkip({ ...a, by: 'someone else', since: T0 + 9 });
    expect(await store.skips()).toEqual([c, b, a]);
    // the fire of b's instant recorded skipped, and b consumed, in one group
    const run = newRun({
      scheduledTime: b.at,
      phase: 'ended',
      outcome: 'skipped',
      error: 'skip: by ui',
    });
    const results = await store.write([
      { kind: 'insert', run },
      { kind: 'skip-done', app: 'billing', job: 'settle', at: b.at },
      { kind: 'skip-done', app: 'billing', job: 'settle', at: 1 }, // none: nothing happens
    ]);
    expect(results.map((r) => r.kind)).toEqual(['recorded', 'ok', 'ok']);
    expect(await store.skips()).toEqual([c, a]);
  });
}
