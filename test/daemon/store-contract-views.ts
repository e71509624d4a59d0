/**
 * The store contract's part for the read views of the API and the web UI
 * (`recentOutcomes`, `outcomeSummary`) and of a standby replica (`runsByIds`,
 * `activeCounts`): registered inside `storeContract`, so every store runs it;
 * `store()` is the migrated store of the current test.
 */
import { expect, it } from 'vitest';
import type { RunRecord, Store } from '../../src/daemon/store/types.js';
import { insertRuns, newRun, T0 } from './store-fixtures.js';

/** Registers the view tests (call inside the contract's describe). */
export function storeViewsContract(getStore: () => Store): void {
  it('runsByIds: the runs that exist, by seq, in one call', async () => {
    const [a, b, c] = await insertRuns(getStore(), [newRun(), newRun(), newRun()]);
    const got = await getStore().runsByIds([c!.id, 'missing', a!.id]);
    expect(got).toEqual([a, c]);
    expect(await getStore().runsByIds([])).toEqual([]);
    expect(b).toBeDefined();
  });

  it('activeCounts: queued and running runs per job; jobs with neither are absent', async () => {
    const running = (job: string, app = 'billing') =>
      newRun({ app, job, phase: 'running', startedAt: T0 });
    await insertRuns(getStore(), [
      running('settle'),
      running('settle'),
      newRun({ job: 'settle' }), // queued
      newRun({ job: 'queue-only' }),
      newRun({ job: 'queue-only' }),
      running('settle', 'crm'),
      newRun({ job: 'done', phase: 'ended', outcome: 'success', endedAt: T0 }),
    ]);
    const got = await getStore().activeCounts();
    expect(
      Object.fromEntries(got.map((g) => [`${g.app}/${g.job}`, [g.running, g.queued]])),
    ).toEqual({
      'billing/queue-only': [0, 2],
      'billing/settle': [2, 1],
      'crm/settle': [1, 0],
    });
  });

  it('recentOutcomes: the newest ended outcomes of each job, newest first, capped per job', async () => {
    const ended = (job: string, outcome: RunRecord['outcome'], app = 'billing') =>
      newRun({ app, job, phase: 'ended', outcome, endedAt: T0 });
    await insertRuns(getStore(), [
      ended('settle', 'success'),
      ended('settle', 'retries_exhausted'),
      ended('other', 'skipped'),
      newRun({ job: 'settle' }), // queued: not an outcome yet
      ended('settle', 'stopped'),
      ended('settle', 'missed', 'crm'), // same job name, another app
      ended('unasked', 'success'),
    ]);
    const got = await getStore().recentOutcomes(
      [
        { app: 'billing', job: 'settle' },
        { app: 'billing', job: 'other' },
        { app: 'crm', job: 'settle' },
        { app: 'billing', job: 'never-ran' },
      ],
      2,
    );
    const byKey = Object.fromEntries(got.map((g) => [`${g.app}/${g.job}`, g.outcomes]));
    expect(byKey).toEqual({
      'billing/settle': ['stopped', 'retries_exhausted'],
      'billing/other': ['skipped'],
      'crm/settle': ['missed'],
    });
    expect(await getStore().recentOutcomes([], 20)).toEqual([]);
  });

  it('recentOutcomes reads 2,000 jobs with long histories at once', async () => {
    const runs = [];
    for (let i = 0; i < 2_000; i++)
      for (let k = 0; k < 25; k++)
        runs.push(
          newRun({ job: `j-${i}`, phase: 'ended', outcome: k === 24 ? 'crashed' : 'success' }),
        );
    await insertRuns(getStore(), runs);
    const jobs = Array.from({ length: 2_000 }, (_, i) => ({ app: 'billing', job: `j-${i}` }));
    const got = await getStore().recentOutcomes(jobs, 20);
    expect(got).toHaveLength(2_000);
    for (const g of got) {
      expect(g.outcomes).toHaveLength(20);
      expect(g.outcomes[0]).toBe('crashed');
    }
  });

  it('outcomeSummary counts ended runs by job, hour, scheduled-or-not and outcome', async () => {
    const H = 3_600_000;
    const hour0 = Math.floor(T0 / H) * H;
    const ended = (
      outcome: RunRecord['outcome'],
      scheduledTime: number,
      trigger: RunRecord['trigger'] = 'schedule',
      job = 'settle',
    ) =>
      newRun({
        job,
        trigger,
        scheduleIndex: trigger === 'manual' ? null : 0,
        phase: 'ended',
        outcome,
        scheduledTime,
        endedAt: scheduledTime + 1,
      });
    await insertRuns(getStore(), [
      ended('success', hour0 - 1), // before `since`
      ended('success', hour0),
      ended('success', hour0 + 10),
      ended('missed', hour0 + 20, 'catchup'),
      ended('success', hour0 + 30, 'manual'),
      ended('retries_exhausted', hour0 + H + 5),
      ended('success', hour0 + 40, 'schedule', 'other'),
      newRun({ scheduledTime: hour0 + 50 }), // queued
    ]);
    const got = await getStore().outcomeSummary([{ app: 'billing', job: 'settle' }], hour0);
    const sorted = [...got].sort(
      (a, b) =>
        a.hour - b.hour || a.outcome.localeCompare(b.outcome) || +a.scheduled - +b.scheduled,
    );
    expect(sorted).toEqual([
      {
        app: 'billing',
        job: 'settle',
        hour: hour0,
        scheduled: true,
        outcome: 'missed',
        count: 1,
      },
      {
        app: 'billing',
        job: 'settle',
        hour: hour0,
        scheduled: false,
        outcome: 'success',
        count: 1,
      },
      {
        app: 'billing',
        job: 'settle',
        hour: hour0,
        scheduled: true,
        outcome: 'success',
        count: 2,
      },
      {
        app: 'billing',
        job: 'settle',
        hour: hour0 + H,
        scheduled: true,
        outcome: 'retries_exhausted',
        count: 1,
      },
    ]);
    expect(await getStore().outcomeSummary([], hour0)).toEqual([]);
  });
}
