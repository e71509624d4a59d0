/**
 * The store contract's part for host mode (SPEC §15, `host-types.ts`): reports as ledger rows,
 * one run or one missed row per expected instant, resends as no-ops, and the watcher's reads.
 * Registered inside `storeContract`, so both stores run it.
 */
import { expect, it } from 'vitest';
import { NO_END_REPORT } from '../../src/daemon/store/host-types.js';
import type { RunRecord, Store } from '../../src/daemon/store/types.js';
import { endOf, report, write } from './report-fixtures.js';
import { newRun, T0 } from './store-fixtures.js';

const AT = T0 + 3_600_000;

/** The watcher's missed row of `shop/report` at `at`, as an insert op. */
function missed(at: number, job = 'report') {
  return {
    kind: 'insert' as const,
    run: newRun({
      app: 'shop',
      job,
      scheduledTime: at,
      runKey: `shop/${job}#${new Date(at).toISOString()}#abc123`,
      trigger: 'host',
      phase: 'ended',
      outcome: 'missed',
      endedAt: at + 130_000,
      error: 'no report from any host within 120 s',
    }),
  };
}

async function rowsAt(store: Store, at: number, job = 'report'): Promise<RunRecord[]> {
  const runs = await store.listRuns({ app: 'shop', job, limit: 1000 });
  return runs.filter((r) => r.scheduledTime === at);
}

/** Registers the host-mode tests (call inside the contract's describe). */
export function hostRunContract(getStore: () => Store): void {
  it('host runs: started then ended completes one row; every resend changes nothing', async () => {
    const store = getStore();
    const started = report('started', AT, { fencingToken: '42' });
    const [a] = await store.recordReports([
      { ...write(started), clockSkewMs: 90_000, latenessMs: null },
    ]);
    expect(a!.kind).toBe('recorded');
    expect(a!.run).toMatchObject({
      id: started.run.id,
      trigger: 'host',
      phase: 'running',
      host: 'web-1',
      fencingToken: '42',
      clockSkewMs: 90_000,
    });
    expect((await store.openHostRuns()).map((r) => r.id)).toEqual([started.run.id]);
    const end = endOf(started, { output: 'line 1\nline 2\n', exitCode: 0 });
    const [b, c, d] = await store.recordReports([write(end), write(end), write(started)]);
    expect(b!.kind).toBe('ended');
    expect(b!.run).toMatchObject({
      phase: 'ended',
      outcome: 'success',
      exitCode: 0,
      seq: a!.run.seq,
    });
    expect(c!.kind).toBe('unchanged');
    expect(d!.kind).toBe('unchanged');
    expect(await store.runOutput(started.run.id)).toBe('line 1\nline 2\n');
    expect(await store.openHostRuns()).toEqual([]);
    const got = await store.getRun(started.run.id);
    expect(got).toMatchObject({ outcome: 'success', host: 'web-1', clockSkewMs: 90_000 });
    expect(got!.attemptLog[0]).toMatchObject({ attempt: 1, exitCode: 0 });
    expect(await rowsAt(store, AT)).toHaveLength(1);
  });

  it('host runs: a report of an instant recorded missed replaces the missed row; a missed row after a report is not recorded', async () => {
    const store = getStore();
    const [m] = await store.write([missed(AT)]);
    expect(m!.kind).toBe('recorded');
    const late = report('started', AT, { startedAt: AT + 400_000 });
    const [r] = await store.recordReports([{ ...write(late), latenessMs: 400_000 }]);
    expect(r).toMatchObject({ kind: 'recorded', replaced: (m as { run: RunRecord }).run.id });
    expect((await rowsAt(store, AT)).map((x) => [x.id, x.latenessMs])).toEqual([
      [late.run.id, 400_000],
    ]);
    // the other way round: the instant is claimed, the watcher's missed row records nothing
    const at2 = AT + 60_000;
    await store.recordReports([write(report('ended', at2))]);
    const [m2] = await store.write([missed(at2)]);
    expect(m2!.kind).toBe('fire-exists');
    expect(await rowsAt(store, at2)).toHaveLength(1);
  });

  it('host runs: skipped and duplicate contenders and a second host are extra rows that claim nothing', async () => {
    const store = getStore();
    const skipped = report('ended', AT, { host: 'web-2', outcome: 'skipped', attemptLog: [] });
    const dup = report('ended', AT, { host: 'web-3', outcome: 'duplicate', attemptLog: [] });
    await store.recordReports([write(skipped), write(dup)]);
    // contenders claim nothing: with no run, the instant is still missed
    const [m] = await store.write([missed(AT)]);
    expect(m!.kind).toBe('recorded');
    const run = report('started', AT);
    const second = report('started', AT, { host: 'web-4' });
    const [a, b] = await store.recordReports([write(run), write(second)]);
    expect(a).toMatchObject({ kind: 'recorded', replaced: (m as { run: RunRecord }).run.id });
    expect(b).toMatchObject({ kind: 'recorded', replaced: null });
    const rows = await rowsAt(store, AT);
    expect(rows.map((x) => x.outcome ?? x.phase).sort()).toEqual([
      'duplicate',
      'running',
      'running',
      'skipped',
    ]);
  });

  it('host runs: an end with no start is recorded whole; a late end supersedes a no-end-report crash', async () => {
    const store = getStore();
    const whole = report('ended', AT, {
      outcome: 'retries_exhausted',
      exitCode: 3,
      error: 'exit code 3',
    });
    const [w] = await store.recordReports([write(whole)]);
    expect(w!.run).toMatchObject({ phase: 'ended', outcome: 'retries_exhausted', exitCode: 3 });
    const started = report('started', AT + 60_000);
    await store.recordReports([write(started)]);
    const [crash] = await store.write([
      {
        kind: 'end',
        id: started.run.id,
        patch: { outcome: 'crashed', endedAt: AT + 999_000, error: NO_END_REPORT },
      },
    ]);
    expect(crash!.kind).toBe('ended');
    const [late] = await store.recordReports([write(endOf(started))]);
    expect(late).toMatchObject({ kind: 'ended', run: { outcome: 'success' } });
    const [again] = await store.recordReports([write(endOf(started))]);
    expect(again!.kind).toBe('unchanged');
  });

  it("host runs: the daemon's recovery leaves them alone; lastReports names each job's newest host", async () => {
    const store = getStore();
    const open = report('started', AT);
    const other = report('started', AT, { job: 'sync', host: 'db-1' });
    await store.recordReports([write(report('ended', AT - 60_000)), write(open), write(other)]);
    await store.write([missed(AT + 60_000)]);
    expect((await store.runningRuns()).filter((r) => r.trigger === 'host')).toEqual([]);
    expect(await store.endCrashed(AT + 1, 'crashed at start-up')).toBe(0);
    expect((await store.openHostRuns()).map((r) => r.id).sort()).toEqual(
      [open.run.id, other.run.id].sort(),
    );
    const last = await store.lastReports([
      { app: 'shop', job: 'report' },
      { app: 'shop', job: 'sync' },
      { app: 'shop', job: 'none' },
    ]);
    expect(Object.fromEntries(last.map((l) => [l.job, [l.runId, l.host]]))).toEqual({
      report: [open.run.id, 'web-1'],
      sync: [other.run.id, 'db-1'],
    });
  });

  it('host runs: a batch of 500 reports is recorded in one call, in order', async () => {
    const store = getStore();
    const reports = Array.from({ length: 500 }, (_, i) => report('ended', AT + i * 1000));
    const results = await store.recordReports(reports.map((r) => write(r)));
    expect(results.every((r) => r.kind === 'recorded')).toBe(true);
    const seqs = results.map((r) => r.run.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(await store.listRuns({ app: 'shop', limit: 1000 })).toHaveLength(500);
  });
}
