/**
 * The one contract every daemon {@link Store} passes (STYLE habit 3): run by
 * `store-sqlite.test.ts` today and by the PostgreSQL store later. `makeStore`
 * returns a fresh, isolated, not yet migrated store (a temp file, a schema
 * per test) and a cleanup that drops it; the suite migrates and closes.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EndPatch, RunRecord, Store } from '../../src/daemon/store/types.js';
import { hostRunContract } from './store-contract-host.js';
import { backfillContract } from './store-contract-backfills.js';
import { deadLetterContract } from './store-contract-dead-letters.js';
import { freezeContract, idempotencyContract, skipContract } from './store-contract-freezes.js';
import { notificationContract } from './store-contract-notifications.js';
import { accessContract } from './store-contract-access.js';
import { storeViewsContract } from './store-contract-views.js';
import { insertRuns, newRun, T0 } from './store-fixtures.js';

/** What a contract factory returns. */
export interface StoreUnderTest {
  store: Store;
  /** A second store on the same database (another writer: a second scheduler, a replica). */
  another(): Store;
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

    it('two writers on one database race for the same fire and the same run key: each is won once', async () => {
      const other = sut.another();
      await other.migrate();
      try {
        for (let round = 0; round < 10; round++) {
          // the same scheduled instant, recorded by both writers at once
          const fire = {
            app: 'race',
            job: 'x',
            scheduleIndex: 0,
            scheduledTime: T0 + round * 60_000,
            trigger: 'schedule' as const,
            phase: 'planned' as const,
            startedAt: T0 + round * 60_000,
          };
          const [a, b] = await Promise.all([
            store.write([{ kind: 'insert', run: newRun({ ...fire, runKey: `race-${round}` }) }]),
            other.write([{ kind: 'insert', run: newRun({ ...fire, runKey: `race-${round}` }) }]),
          ]);
          expect([a[0]!.kind, b[0]!.kind].sort()).toEqual(['fire-exists', 'recorded']);
          // one run key, claimed by two manual runs at once: one plans it, the other is a duplicate
          const key = `race-manual-${round}`;
          const manual = { app: 'race', job: 'y', trigger: 'manual' as const, scheduleIndex: null };
          const [c, d] = await Promise.all([
            store.write([
              {
                kind: 'insert',
                run: newRun({ ...manual, runKey: key, phase: 'planned', startedAt: T0 }),
              },
            ]),
            other.write([
              {
                kind: 'insert',
                run: newRun({ ...manual, runKey: key, phase: 'planned', startedAt: T0 }),
              },
            ]),
          ]);
          const phases = [c[0], d[0]].map((r) =>
            r?.kind === 'recorded' ? `${r.run.phase}/${r.run.outcome}` : r?.kind,
          );
          expect(phases.sort()).toEqual(['ended/duplicate', 'planned/null']);
        }
        // two queued runs of one key started by both writers at once: one starts, one is a duplicate
        const key = 'race-queued';
        const [q1, q2] = await insertRuns(store, [
          newRun({ app: 'race', job: 'z', runKey: key, trigger: 'manual', scheduleIndex: null }),
          newRun({ app: 'race', job: 'z', runKey: key, trigger: 'manual', scheduleIndex: null }),
        ]);
        const [s1, s2] = await Promise.all([
          store.write([{ kind: 'start', id: q1!.id, startedAt: T0 }]),
          other.write([{ kind: 'start', id: q2!.id, startedAt: T0 }]),
        ]);
        expect([s1[0]!.kind, s2[0]!.kind].sort()).toEqual(['duplicate', 'started']);
        expect(await store.keyHolder(key)).toMatchObject({ state: 'running' });
      } finally {
        await other.close();
      }
    });

    it('migrating again is idempotent and keeps the data', async () => {
      const [run] = await insertRuns(store, [newRun()]);
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
      const inserted = await insertRuns(store, [full, bare]);
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
      const a = await insertRuns(store, [newRun(), newRun(), newRun()]);
      const b = await insertRuns(store, [newRun(), newRun()]);
      const all = [...seqs(a), ...seqs(b)];
      for (let i = 1; i < all.length; i++) expect(all[i]).toBeGreaterThan(all[i - 1]!);
      expect(await insertRuns(store, [])).toEqual([]);
    });

    it('a batch that fails inserts nothing', async () => {
      const dup = newRun();
      const good = newRun();
      await expect(insertRuns(store, [good, dup, { ...newRun(), id: dup.id }])).rejects.toThrow();
      expect(await store.getRun(good.id)).toBeNull();
      expect(await store.listRuns({})).toEqual([]);
    });

    it('lists newest first, filtered by app, job, outcome and phase', async () => {
      const rows = await insertRuns(store, [
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
      expect(ids(await store.listRuns({ outcomes: ['success', 'skipped'] }))).toEqual(
        ids([r3!, r1!, r0!]),
      );
      expect(ids(await store.listRuns({ app: 'a', outcomes: ['success'] }))).toEqual(ids([r0!]));
      expect(await store.listRuns({ outcomes: [] })).toEqual([]);
      expect(ids(await store.listRuns({ phase: 'ended' }))).toEqual(ids([r3!, r1!, r0!]));
      expect(ids(await store.listRuns({ phase: 'running' }))).toEqual(ids([r2!]));
      expect(
        ids(await store.listRuns({ app: 'a', job: 'x', outcome: 'skipped', phase: 'ended' })),
      ).toEqual(ids([r3!]));
      expect(await store.listRuns({ app: 'nope' })).toEqual([]);
    });

    it('limits (default 100, at most 1000) and pages with beforeSeq', async () => {
      const rows = await insertRuns(
        store,
        Array.from({ length: 1005 }, () => newRun()),
      );
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
      const [q1, , q2] = await insertRuns(store, [
        newRun({ job: 'x', trigger: 'schedule' }),
        newRun({ job: 'y' }),
        newRun({ job: 'x', trigger: 'manual', scheduleIndex: null }),
      ]);
      await insertRuns(store, [newRun({ job: 'x', phase: 'running' })]);
      const [q3] = await insertRuns(store, [newRun({ job: 'x', trigger: 'catchup' })]);
      expect(ids(await store.queuedRuns('billing', 'x'))).toEqual(ids([q1!, q2!, q3!]));
      expect(await store.queuedRuns('billing', 'y')).toHaveLength(1);
      expect(await store.queuedRuns('other', 'x')).toEqual([]);
      const all = await store.queuedRuns();
      expect(all).toHaveLength(4);
      expect(seqs(all)).toEqual([...seqs(all)].sort((a, b) => a - b));
      await store.write([{ kind: 'start', id: q1!.id, startedAt: T0 }]);
      expect(ids(await store.queuedRuns('billing', 'x'))).toEqual(ids([q2!, q3!]));
      expect(ids(await store.runningRuns())).toHaveLength(2);
    });

    it('start claims the key of a queued run (planned); its first attempt makes it running; end records and releases', async () => {
      const [a, b] = await insertRuns(store, [newRun({ dueAt: T0 + 7 }), newRun()]);
      const [started, gone, dueB] = await store.write([
        { kind: 'start', id: a!.id, startedAt: T0 + 10 },
        { kind: 'start', id: randomUUID(), startedAt: T0 },
        { kind: 'due', id: b!.id },
      ]);
      const planned = { ...a, phase: 'planned', startedAt: T0 + 10, dueAt: null };
      expect(started).toEqual({ kind: 'started', run: planned });
      expect(gone).toEqual({ kind: 'gone' });
      expect(dueB).toEqual({ kind: 'ok' });
      expect(await store.getRun(a!.id)).toEqual(planned);
      expect(await store.keyHolder(a!.runKey)).toEqual({ runId: a!.id, state: 'running' });
      // a second start of a planned run does nothing
      expect(await store.write([{ kind: 'start', id: a!.id, startedAt: T0 + 11 }])).toEqual([
        { kind: 'gone' },
      ]);
      // attempts: planned → running with the attempt in flight; an older attempt number never
      // lowers it; a queued run has no attempt to record
      expect(
        await store.write([
          { kind: 'attempt', id: a!.id, attempt: 2 },
          { kind: 'attempt', id: a!.id, attempt: 1 },
          { kind: 'attempt', id: b!.id, attempt: 1 },
        ]),
      ).toEqual([{ kind: 'ok' }, { kind: 'ok' }, { kind: 'gone' }]);
      const running = { ...planned, phase: 'running', attempts: 2 };
      expect(await store.getRun(a!.id)).toEqual(running);
      expect((await store.runningRuns()).map((r) => r.id)).toEqual([a!.id]);
      const attemptLog = [
        { attempt: 1, startedAt: T0 + 10, durationMs: 5, status: 503, error: 'HTTP 503' },
        { attempt: 2, startedAt: T0 + 1015, durationMs: 4, status: 422, error: 'HTTP 422' },
      ];
      const patch: EndPatch = {
        outcome: 'app_rejected',
        endedAt: T0 + 20,
        error: 'HTTP 422',
        attempts: 2,
        lastStatus: 422,
        attemptLog,
      };
      const [ended] = await store.write([{ kind: 'end', id: a!.id, patch }]);
      const final = { ...running, phase: 'ended', ...patch };
      expect(ended).toEqual({ kind: 'ended', run: final });
      expect(await store.getRun(a!.id)).toEqual(final);
      expect(await store.keyHolder(a!.runKey)).toBeNull(); // a failure releases the key
      expect(await store.write([{ kind: 'end', id: a!.id, patch }])).toEqual([{ kind: 'gone' }]);
      expect(await store.write([])).toEqual([]);
    });

    it('a succeeded run key is never claimed again, by insert or by start', async () => {
      const key = 'billing/settle#2026-01-01T00:00:00Z#abc';
      const [first] = await insertRuns(store, [
        newRun({ runKey: key, phase: 'running', startedAt: T0 }),
      ]);
      expect(await store.keyHolder(key)).toEqual({ runId: first!.id, state: 'running' });
      // while it runs, a second running insert of the key is recorded duplicate
      const [second] = await insertRuns(store, [
        newRun({ runKey: key, phase: 'running', startedAt: T0 + 1 }),
      ]);
      expect(second).toMatchObject({
        phase: 'ended',
        outcome: 'duplicate',
        startedAt: null,
        endedAt: T0 + 1,
        error: `run key is being run by run ${first!.id}`,
      });
      const [queued] = await insertRuns(store, [newRun({ runKey: key })]);
      await store.write([
        { kind: 'end', id: first!.id, patch: { outcome: 'success', endedAt: T0 + 5, error: null } },
      ]);
      expect(await store.keyHolder(key)).toEqual({ runId: first!.id, state: 'succeeded' });
      const [late] = await store.write([{ kind: 'start', id: queued!.id, startedAt: T0 + 9 }]);
      expect(late).toMatchObject({
        kind: 'duplicate',
        run: {
          id: queued!.id,
          phase: 'ended',
          outcome: 'duplicate',
          endedAt: T0 + 9,
          error: `run key already succeeded in run ${first!.id}`,
        },
      });
      const [third] = await insertRuns(store, [
        newRun({ runKey: key, phase: 'running', startedAt: T0 + 20 }),
      ]);
      expect(third).toMatchObject({ outcome: 'duplicate' });
      expect(await store.keyHolder(key)).toEqual({ runId: first!.id, state: 'succeeded' });
    });

    it('command runs: output_truncated round-trips and is set by an end; an end without it keeps it', async () => {
      const [inserted] = await insertRuns(store, [
        newRun({ phase: 'ended', outcome: 'success', endedAt: T0 + 1, outputTruncated: true }),
      ]);
      expect(inserted!.outputTruncated).toBe(true);
      expect((await store.getRun(inserted!.id))!.outputTruncated).toBe(true);
      const [a, b] = await insertRuns(store, [
        newRun({ phase: 'running', startedAt: T0 }),
        newRun({ phase: 'running', startedAt: T0 }),
      ]);
      expect(a!.outputTruncated).toBe(false);
      const [endA, endB] = await store.write([
        {
          kind: 'end',
          id: a!.id,
          patch: { outcome: 'success', endedAt: T0 + 2, error: null, outputTruncated: true },
        },
        { kind: 'end', id: b!.id, patch: { outcome: 'success', endedAt: T0 + 2, error: null } },
      ]);
      expect(endA).toMatchObject({ kind: 'ended', run: { outputTruncated: true } });
      expect(endB).toMatchObject({ kind: 'ended', run: { outputTruncated: false } });
      expect((await store.listRuns({ outcome: 'success' })).map((r) => r.outputTruncated)).toEqual([
        false,
        true,
        true,
      ]);
    });

    it('command runs: the process of the current attempt is recorded while running, and only then', async () => {
      const [queued, running, other] = await insertRuns(store, [
        newRun(),
        newRun({ phase: 'running', startedAt: T0 }),
        newRun({ phase: 'running', startedAt: T0 }),
      ]);
      const results = await store.write([
        { kind: 'process', id: queued!.id, pid: 10, startTime: 'boot:1' },
        { kind: 'process', id: running!.id, pid: 11, startTime: 'boot:2' },
        { kind: 'process', id: running!.id, pid: 12, startTime: null }, // the next attempt
        { kind: 'process', id: other!.id, pid: 13, startTime: 'boot:3' },
        { kind: 'process', id: randomUUID(), pid: 14, startTime: 'boot:4' },
      ]);
      expect(results.map((r) => r.kind)).toEqual(['gone', 'ok', 'ok', 'ok', 'gone']);
      expect(await store.runningProcesses()).toEqual([
        { runId: running!.id, app: 'billing', job: 'settle', pid: 12, startTime: null },
        { runId: other!.id, app: 'billing', job: 'settle', pid: 13, startTime: 'boot:3' },
      ]);
      await store.write([
        { kind: 'end', id: running!.id, patch: { outcome: 'success', endedAt: T0, error: null } },
      ]);
      expect((await store.runningProcesses()).map((p) => p.runId)).toEqual([other!.id]);
      expect(
        await store.write([{ kind: 'process', id: running!.id, pid: 9, startTime: null }]),
      ).toEqual([{ kind: 'gone' }]);
      await store.endCrashed(T0 + 5, 'crashed');
      expect(await store.runningProcesses()).toEqual([]);
    });

    it('a released key can be claimed again; a success inserted as ended marks its key', async () => {
      const key = 'billing/settle#2026-01-01T00:01:00Z#abc';
      const [a] = await insertRuns(store, [
        newRun({ runKey: key, phase: 'running', startedAt: T0 }),
      ]);
      await store.write([
        {
          kind: 'end',
          id: a!.id,
          patch: { outcome: 'stopped', endedAt: T0 + 1, error: 'cancelled' },
        },
      ]);
      const [b] = await insertRuns(store, [
        newRun({ runKey: key, phase: 'running', startedAt: T0 + 2 }),
      ]);
      expect(b).toMatchObject({ phase: 'running' });
      const done = 'billing/settle#2026-01-01T00:02:00Z#abc';
      const [c] = await insertRuns(store, [
        newRun({ runKey: done, phase: 'ended', outcome: 'success', endedAt: T0 }),
      ]);
      expect(await store.keyHolder(done)).toEqual({ runId: c!.id, state: 'succeeded' });
    });

    it('one schedule instant is recorded once (fire claim); manual runs have none', async () => {
      const fire = { app: 'billing', job: 'settle', scheduleIndex: 2, scheduledTime: T0 };
      const [a, b, c, d, e] = await store.write([
        { kind: 'insert', run: newRun({ ...fire }) },
        { kind: 'insert', run: newRun({ ...fire, trigger: 'catchup' }) },
        { kind: 'insert', run: newRun({ ...fire, scheduleIndex: 3 }) },
        { kind: 'insert', run: newRun({ ...fire, trigger: 'manual', scheduleIndex: null }) },
        { kind: 'insert', run: newRun({ ...fire, trigger: 'replay' }) },
      ]);
      expect(a).toMatchObject({ kind: 'recorded' });
      expect(b).toEqual({ kind: 'fire-exists' });
      expect(c).toMatchObject({ kind: 'recorded' });
      expect(d).toMatchObject({ kind: 'recorded' });
      expect(e).toMatchObject({ kind: 'recorded' });
      expect(await store.listRuns({})).toHaveLength(4);
    });

    it('withdraw takes back a planned run that sent nothing: row, fire claim and key claim', async () => {
      const fire = { scheduleIndex: 1, scheduledTime: T0 + 7_000 };
      const [planned, sent] = await insertRuns(store, [
        newRun({ ...fire, phase: 'running', startedAt: T0 + 7_000 }),
        newRun({ phase: 'running', startedAt: T0, attempts: 1 }),
      ]);
      expect(
        await store.write([
          { kind: 'withdraw', id: planned!.id },
          { kind: 'withdraw', id: sent!.id }, // an attempt was sent: not taken back
          { kind: 'withdraw', id: randomUUID() },
        ]),
      ).toEqual([{ kind: 'ok' }, { kind: 'gone' }, { kind: 'gone' }]);
      expect(await store.getRun(planned!.id)).toBeNull();
      expect(await store.keyHolder(planned!.runKey)).toBeNull();
      expect(await store.getRun(sent!.id)).toMatchObject({ phase: 'running' });
      // the instant can be recorded again
      const [again] = await store.write([{ kind: 'insert', run: newRun({ ...fire }) }]);
      expect(again).toMatchObject({ kind: 'recorded' });
    });

    it('ops of one write apply in order and all or nothing', async () => {
      const run = newRun();
      const results = await store.write([
        { kind: 'insert', run },
        { kind: 'start', id: run.id, startedAt: T0 },
        { kind: 'end', id: run.id, patch: { outcome: 'success', endedAt: T0 + 1, error: null } },
        { kind: 'checkpoint', ref: { app: 'billing', job: 'settle', scheduleIndex: 0 }, at: T0 },
      ]);
      expect(results.map((r) => r.kind)).toEqual(['recorded', 'started', 'ended', 'ok']);
      const other = newRun();
      await expect(
        store.write([
          { kind: 'insert', run: other },
          { kind: 'insert', run: { ...newRun(), id: run.id } }, // id taken: the write fails
        ]),
      ).rejects.toThrow();
      expect(await store.getRun(other.id)).toBeNull();
    });

    it('endCrashed ends exactly the running runs as crashed at now and frees their keys', async () => {
      const [queued, r1, ended, r2] = await insertRuns(store, [
        newRun(),
        newRun({ phase: 'running', startedAt: T0, attempts: 2, lastStatus: 500 }),
        newRun({ phase: 'ended', outcome: 'success', startedAt: T0, endedAt: T0 + 1 }),
        newRun({ phase: 'running', startedAt: T0 + 5, attempts: 1, job: 'other' }),
      ]);
      const now = T0 + 3_600_000;
      expect(await store.endCrashed(now, 'daemon died')).toBe(2);
      for (const r of [r1!, r2!]) {
        expect(await store.getRun(r.id)).toEqual({
          ...r,
          phase: 'ended',
          outcome: 'crashed',
          endedAt: now,
          error: 'daemon died',
        });
        expect(await store.keyHolder(r.runKey)).toBeNull();
      }
      expect(await store.keyHolder(ended!.runKey)).toEqual({
        runId: ended!.id,
        state: 'succeeded',
      });
      expect(await store.getRun(queued!.id)).toEqual(queued);
      expect(await store.getRun(ended!.id)).toEqual(ended);
      expect(await store.runningRuns()).toEqual([]);
      expect(await store.endCrashed(now + 1, 'x')).toBe(0);
    });

    it('pruneRuns deletes only ended runs that ended before the cut-off', async () => {
      const [old, recent, queued, running] = await insertRuns(store, [
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

    it('lastSuccess sees only successful runs of the job', async () => {
      expect(await store.lastSuccess('billing', 'settle')).toBeNull();
      await insertRuns(store, [
        newRun({ phase: 'ended', outcome: 'retries_exhausted', endedAt: T0 + 1 }),
        newRun({ phase: 'ended', outcome: 'success', endedAt: T0 + 9, job: 'x' }),
      ]);
      expect(await store.lastSuccess('billing', 'settle')).toBeNull();
      await insertRuns(store, [
        newRun({ phase: 'ended', outcome: 'success', endedAt: T0 + 50 }),
        newRun({ phase: 'ended', outcome: 'success', endedAt: T0 + 40 }),
        newRun({ phase: 'ended', outcome: 'skipped', endedAt: T0 + 90 }),
      ]);
      expect(await store.lastSuccess('billing', 'settle')).toBe(T0 + 50);
      expect(await store.lastSuccess('billing', 'x')).toBe(T0 + 9);
      expect(await store.lastSuccesses()).toEqual(
        new Map([
          ['billing/settle', T0 + 50],
          ['billing/x', T0 + 9],
        ]),
      );
    });

    it('checkpoints: absent, set, moved forward only, per schedule', async () => {
      const ref = { app: 'billing', job: 'settle', scheduleIndex: 0 };
      const at = async (r: typeof ref) =>
        (await store.checkpoints()).find(
          (c) => c.app === r.app && c.job === r.job && c.scheduleIndex === r.scheduleIndex,
        )?.at ?? null;
      expect(await store.checkpoints()).toEqual([]);
      await store.write([
        { kind: 'checkpoint', ref, at: T0 },
        { kind: 'checkpoint', ref: { ...ref, scheduleIndex: 1 }, at: T0 + 1 },
      ]);
      expect(await at(ref)).toBe(T0);
      expect(await at({ ...ref, scheduleIndex: 1 })).toBe(T0 + 1);
      await store.write([{ kind: 'checkpoint', ref, at: T0 + 60_000 }]);
      expect(await at(ref)).toBe(T0 + 60_000);
      await store.write([{ kind: 'checkpoint', ref, at: T0 }]); // a clock that went back
      expect(await at(ref)).toBe(T0 + 60_000);
      expect(await at({ ...ref, job: 'other' })).toBeNull();
      expect(await store.checkpoints()).toHaveLength(2);
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
      await insertRuns(store, [
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

    storeViewsContract(() => store);
    notificationContract(() => store);
    accessContract(
      () => store,
      () => sut.another(),
    );
    hostRunContract(() => store);
    backfillContract(() => store);
    deadLetterContract(() => store);
    freezeContract(() => store);
    idempotencyContract(() => store);
    skipContract(() => store);

    it('inserts 10,000 runs in one call', async () => {
      const batch = Array.from({ length: 10_000 }, (_, i) => newRun({ job: `job-${i % 100}` }));
      const rows = await insertRuns(store, batch);
      expect(rows).toHaveLength(10_000);
      expect(ids(rows)).toEqual(ids(batch));
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.seq).toBeGreaterThan(rows[i - 1]!.seq);
      expect(await store.queuedRuns('billing', 'job-7')).toHaveLength(100);
      expect(await store.getRun(batch[9_999]!.id)).toEqual(rows[9_999]);
    });
  });
}
