/**
 * The one contract every daemon {@link Store} passes (STYLE habit 3): run by
 * `store-sqlite.test.ts` today and by the PostgreSQL store later. `makeStore`
 * returns a fresh, isolated, not yet migrated store (a temp file, a schema
 * per test) and a cleanup that drops it; the suite migrates and closes.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord, Store } from '../../src/daemon/store/types.js';
import { newRun, T0 } from './store-fixtures.js';

/** What a contract factory returns. */
export interface StoreUnderTest {
  store: Store;
  cleanup(): Promise<void>;
}

const seqs = (rows: RunRecord[]): number[] => rows.map((r) => r.seq);
const ids = (rows: { id: string }[]): string[] => rows.map((r) => r.id);

/** Registers the shared store contract suite for one implementation. */
export function storeContract(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`store contract: ${name}`, () => {
    let sut: StoreUnderTest;
    let store: Store;

    beforeEach(async () => {
      sut = await makeStore();
      store = sut.store;
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
      await sut.cleanup();
    });

    it('migrating again is idempotent and keeps the data', async () => {
      const [run] = await store.insertRuns([newRun()]);
      await store.migrate();
      await store.migrate();
      expect(await store.getRun(run!.id)).toEqual(run);
    });

    it('round-trips every field of a run, set and null', async () => {
      const full = newRun({
        scheduleIndex: 3,
        trigger: 'catchup',
        phase: 'ended',
        outcome: 'retries_exhausted',
        attempts: 4,
        lastStatus: 503,
        startedAt: T0 + 1_001,
        endedAt: T0 + 9_999,
        dueAt: T0 + 500,
      });
      const bare = newRun({ scheduleIndex: null, trigger: 'manual' });
      const inserted = await store.insertRuns([full, bare]);
      expect(inserted).toEqual([
        { ...full, seq: expect.any(Number) },
        { ...bare, seq: expect.any(Number) },
      ]);
      expect(await store.getRun(full.id)).toEqual(inserted[0]);
      expect(await store.getRun(bare.id)).toEqual(inserted[1]);
      expect(await store.listRuns({})).toEqual([inserted[1], inserted[0]]);
      expect(await store.getRun(randomUUID())).toBeNull();
    });

    it('assigns strictly increasing seq within and across batches', async () => {
      const a = await store.insertRuns([newRun(), newRun(), newRun()]);
      const b = await store.insertRuns([newRun(), newRun()]);
      const all = [...seqs(a), ...seqs(b)];
      for (let i = 1; i < all.length; i++) expect(all[i]).toBeGreaterThan(all[i - 1]!);
      expect(await store.insertRuns([])).toEqual([]);
    });

    it('a batch that fails inserts nothing', async () => {
      const dup = newRun();
      const good = newRun();
      await expect(store.insertRuns([good, dup, { ...newRun(), id: dup.id }])).rejects.toThrow();
      expect(await store.getRun(good.id)).toBeNull();
      expect(await store.listRuns({})).toEqual([]);
    });

    it('lists newest first, filtered by app, job, outcome and phase', async () => {
      const rows = await store.insertRuns([
        newRun({ app: 'a', job: 'x', phase: 'ended', outcome: 'success' }),
        newRun({ app: 'a', job: 'y', phase: 'ended', outcome: 'skipped' }),
        newRun({ app: 'b', job: 'x', phase: 'running' }),
        newRun({ app: 'a', job: 'x', phase: 'ended', outcome: 'skipped' }),
        newRun({ app: 'a', job: 'x', phase: 'queued' }),
      ]);
      const [r0, r1, r2, r3, r4] = rows;
      expect(ids(await store.listRuns({}))).toEqual(ids([r4!, r3!, r2!, r1!, r0!]));
      expect(ids(await store.listRuns({ app: 'a' }))).toEqual(ids([r4!, r3!, r1!, r0!]));
      expect(ids(await store.listRuns({ job: 'x' }))).toEqual(ids([r4!, r3!, r2!, r0!]));
      expect(ids(await store.listRuns({ app: 'a', job: 'x' }))).toEqual(ids([r4!, r3!, r0!]));
      expect(ids(await store.listRuns({ outcome: 'skipped' }))).toEqual(ids([r3!, r1!]));
      expect(ids(await store.listRuns({ phase: 'ended' }))).toEqual(ids([r3!, r1!, r0!]));
      expect(ids(await store.listRuns({ phase: 'running' }))).toEqual(ids([r2!]));
      expect(
        ids(await store.listRuns({ app: 'a', job: 'x', outcome: 'skipped', phase: 'ended' })),
      ).toEqual(ids([r3!]));
      expect(await store.listRuns({ app: 'nope' })).toEqual([]);
    });

    it('limits (default 100, at most 1000) and pages with beforeSeq', async () => {
      const rows = await store.insertRuns(Array.from({ length: 1005 }, () => newRun()));
      expect(await store.listRuns({})).toHaveLength(100);
      expect(await store.listRuns({ limit: 5000 })).toHaveLength(1000);
      const first = await store.listRuns({ limit: 3 });
      expect(ids(first)).toEqual(ids(rows.slice(-3).reverse()));
      const next = await store.listRuns({ limit: 3, beforeSeq: first.at(-1)!.seq });
      expect(ids(next)).toEqual(ids(rows.slice(-6, -3).reverse()));
      // walking the cursor visits every run exactly once
      const seen: string[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await store.listRuns({ limit: 400, ...(before ? { beforeSeq: before } : {}) });
        if (page.length === 0) break;
        seen.push(...ids(page));
        before = page.at(-1)!.seq;
      }
      expect(seen).toEqual(ids([...rows].reverse()));
    });

    it('queuedRuns is FIFO by seq, per job or across jobs, queued phase only', async () => {
      const [q1, , q2] = await store.insertRuns([
        newRun({ job: 'x', trigger: 'schedule' }),
        newRun({ job: 'y' }),
        newRun({ job: 'x', trigger: 'manual', scheduleIndex: null }),
      ]);
      await store.insertRuns([newRun({ job: 'x', phase: 'running' })]);
      const [q3] = await store.insertRuns([newRun({ job: 'x', trigger: 'catchup' })]);
      expect(ids(await store.queuedRuns('billing', 'x'))).toEqual(ids([q1!, q2!, q3!]));
      expect(await store.queuedRuns('billing', 'y')).toHaveLength(1);
      expect(await store.queuedRuns('other', 'x')).toEqual([]);
      const all = await store.queuedRuns();
      expect(all).toHaveLength(4);
      expect(seqs(all)).toEqual([...seqs(all)].sort((a, b) => a - b));
      await store.updateRuns([{ id: q1!.id, patch: { phase: 'running', startedAt: T0 } }]);
      expect(ids(await store.queuedRuns('billing', 'x'))).toEqual(ids([q2!, q3!]));
      expect(ids(await store.runningRuns())).toHaveLength(2);
    });

    it('updateRuns patches only the given fields, in one call for many runs', async () => {
      const [a, b] = await store.insertRuns([newRun({ dueAt: T0 + 7 }), newRun()]);
      await store.updateRuns([
        { id: a!.id, patch: { phase: 'running', startedAt: T0 + 10, attempts: 1 } },
        { id: b!.id, patch: { dueAt: T0 + 99 } },
        { id: randomUUID(), patch: { phase: 'ended' } },
        { id: b!.id, patch: {} },
      ]);
      expect(await store.getRun(a!.id)).toEqual({
        ...a,
        phase: 'running',
        startedAt: T0 + 10,
        attempts: 1,
      });
      expect(await store.getRun(b!.id)).toEqual({ ...b, dueAt: T0 + 99 });
      await store.updateRuns([
        {
          id: a!.id,
          patch: {
            phase: 'ended',
            outcome: 'app_rejected',
            lastStatus: 422,
            endedAt: T0 + 20,
            dueAt: null,
          },
        },
      ]);
      expect(await store.getRun(a!.id)).toEqual({
        ...a,
        phase: 'ended',
        outcome: 'app_rejected',
        attempts: 1,
        lastStatus: 422,
        startedAt: T0 + 10,
        endedAt: T0 + 20,
        dueAt: null,
      });
      await store.updateRuns([]);
    });

    it('endCrashed ends exactly the running runs as crashed at now', async () => {
      const [queued, r1, ended, r2] = await store.insertRuns([
        newRun(),
        newRun({ phase: 'running', startedAt: T0, attempts: 2, lastStatus: 500 }),
        newRun({ phase: 'ended', outcome: 'success', startedAt: T0, endedAt: T0 + 1 }),
        newRun({ phase: 'running', startedAt: T0 + 5, attempts: 1, job: 'other' }),
      ]);
      const now = T0 + 3_600_000;
      expect(await store.endCrashed(now)).toBe(2);
      for (const r of [r1!, r2!]) {
        expect(await store.getRun(r.id)).toEqual({
          ...r,
          phase: 'ended',
          outcome: 'crashed',
          endedAt: now,
        });
      }
      expect(await store.getRun(queued!.id)).toEqual(queued);
      expect(await store.getRun(ended!.id)).toEqual(ended);
      expect(await store.runningRuns()).toEqual([]);
      expect(await store.endCrashed(now + 1)).toBe(0);
    });

    it('pruneRuns deletes only ended runs that ended before the cut-off', async () => {
      const [old, recent, queued, running] = await store.insertRuns([
        newRun({ phase: 'ended', outcome: 'success', startedAt: T0, endedAt: T0 + 1 }),
        newRun({ phase: 'ended', outcome: 'skipped', endedAt: T0 + 10_000 }),
        newRun(),
        newRun({ phase: 'running', startedAt: T0 }),
      ]);
      expect(await store.pruneRuns(T0 + 5_000)).toBe(1);
      expect(await store.getRun(old!.id)).toBeNull();
      for (const r of [recent!, queued!, running!]) expect(await store.getRun(r.id)).toEqual(r);
      expect(await store.pruneRuns(T0 + 5_000)).toBe(0);
    });

    it('succeededAmong returns exactly the keys that succeeded, across chunks', async () => {
      const keys = Array.from(
        { length: 1200 },
        (_, i) => `app/job#2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z#${i}`,
      );
      await store.insertRuns([
        newRun({ runKey: keys[3]!, phase: 'ended', outcome: 'success', endedAt: T0 }),
        newRun({ runKey: keys[1100]!, phase: 'ended', outcome: 'success', endedAt: T0 }),
        newRun({ runKey: keys[7]!, phase: 'ended', outcome: 'app_rejected', endedAt: T0 }),
      ]);
      expect(await store.succeededAmong(keys)).toEqual(new Set([keys[3], keys[1100]]));
      expect(await store.succeededAmong([])).toEqual(new Set());
    });

    it('hasSucceeded and lastSuccess see only successful runs', async () => {
      const key = 'billing/settle#2026-01-01T00:00:00Z#abc';
      expect(await store.hasSucceeded(key)).toBe(false);
      expect(await store.lastSuccess('billing', 'settle')).toBeNull();
      await store.insertRuns([
        newRun({ runKey: key, phase: 'ended', outcome: 'retries_exhausted', endedAt: T0 + 1 }),
        newRun({ runKey: 'other', phase: 'ended', outcome: 'success', endedAt: T0 + 9, job: 'x' }),
      ]);
      expect(await store.hasSucceeded(key)).toBe(false);
      expect(await store.lastSuccess('billing', 'settle')).toBeNull();
      await store.insertRuns([
        newRun({ runKey: key, phase: 'ended', outcome: 'success', endedAt: T0 + 50 }),
        newRun({ phase: 'ended', outcome: 'success', endedAt: T0 + 40 }),
        newRun({ phase: 'ended', outcome: 'skipped', endedAt: T0 + 90 }),
      ]);
      expect(await store.hasSucceeded(key)).toBe(true);
      expect(await store.hasSucceeded('other')).toBe(true);
      expect(await store.hasSucceeded(`${key}x`)).toBe(false);
      expect(await store.lastSuccess('billing', 'settle')).toBe(T0 + 50);
      expect(await store.lastSuccess('billing', 'x')).toBe(T0 + 9);
    });

    it('checkpoints: absent, set, overwritten, per schedule', async () => {
      const ref = { app: 'billing', job: 'settle', scheduleIndex: 0 };
      expect(await store.getCheckpoint(ref)).toBeNull();
      await store.setCheckpoints([
        { ...ref, at: T0 },
        { ...ref, scheduleIndex: 1, at: T0 + 1 },
      ]);
      expect(await store.getCheckpoint(ref)).toBe(T0);
      expect(await store.getCheckpoint({ ...ref, scheduleIndex: 1 })).toBe(T0 + 1);
      await store.setCheckpoints([{ ...ref, at: T0 + 60_000 }]);
      expect(await store.getCheckpoint(ref)).toBe(T0 + 60_000);
      expect(await store.getCheckpoint({ ...ref, job: 'other' })).toBeNull();
      await store.setCheckpoints([]);
    });

    it('paused jobs: set, idempotent, unset', async () => {
      expect(await store.pausedJobs()).toEqual(new Set());
      await store.setPaused('billing', 'settle', true);
      await store.setPaused('billing', 'settle', true);
      await store.setPaused('crm', 'sync', true);
      expect(await store.pausedJobs()).toEqual(new Set(['billing/settle', 'crm/sync']));
      await store.setPaused('billing', 'settle', false);
      await store.setPaused('billing', 'settle', false);
      expect(await store.pausedJobs()).toEqual(new Set(['crm/sync']));
    });

    it('outcomeCounts counts ended runs of one job by scheduled time', async () => {
      const ended = (outcome: RunRecord['outcome'], scheduledTime: number, job = 'settle') =>
        newRun({ job, phase: 'ended', outcome, scheduledTime, endedAt: scheduledTime + 1 });
      await store.insertRuns([
        ended('success', T0 - 1),
        ended('success', T0),
        ended('success', T0 + 10),
        ended('skipped', T0 + 20),
        ended('queue_full', T0 + 30),
        ended('success', T0 + 40, 'other'),
        newRun({ scheduledTime: T0 + 50 }),
      ]);
      expect(await store.outcomeCounts('billing', 'settle', T0)).toEqual({
        success: 2,
        skipped: 1,
        queue_full: 1,
      });
      expect(await store.outcomeCounts('billing', 'settle', T0 + 100)).toEqual({});
    });

    it('inserts 10,000 runs in one call', async () => {
      const batch = Array.from({ length: 10_000 }, (_, i) => newRun({ job: `job-${i % 100}` }));
      const rows = await store.insertRuns(batch);
      expect(rows).toHaveLength(10_000);
      expect(ids(rows)).toEqual(ids(batch));
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.seq).toBeGreaterThan(rows[i - 1]!.seq);
      expect(await store.queuedRuns('billing', 'job-7')).toHaveLength(100);
      expect(await store.getRun(batch[9_999]!.id)).toEqual(rows[9_999]);
    });
  });
}
