/**
 * Retention (`--retention-days`) on a real SQLite ledger: ended runs and finished notifications
 * older than the retention go, pending notifications and newer rows stay, at most once an hour,
 * and each deletion is reported.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/events.js';
import { planEvent } from '../../src/daemon/notify-plan.js';
import { PRUNE_EVERY_MS, Retention } from '../../src/daemon/retention.js';
import { openSqliteStore, type SqliteStore } from '../../src/daemon/store/sqlite.js';
import type { RunRecord } from '../../src/daemon/store/types.js';
import { newRun, T0 } from './store-fixtures.js';

const DAY = 86_400_000;
let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cronix-retention-'));
  store = await openSqliteStore(join(dir, 'ledger.sqlite'));
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A failed run of `job` that ended at `at`, with its failure notification ended `delivered`. */
async function failedRunNotified(job: string, at: number, delivered: boolean): Promise<string> {
  const run = newRun({ job, phase: 'ended', outcome: 'retries_exhausted', endedAt: at });
  await store.write([{ kind: 'insert', run }]);
  const target = {
    notifier: 'chat',
    type: 'webhook' as const,
    on: ['failed' as const],
    repeatMs: 60_000,
    slowAfterSeconds: 600,
  };
  const [n] = await store.recordNotifications(run.app, job, (groups) =>
    planEvent('failed', { ...run, seq: 0 } as RunRecord, at, [target], groups, randomUUID),
  );
  if (delivered)
    await store.updateNotification(n!.id, {
      status: 'delivered',
      attempts: 1,
      lastStatus: 200,
      lastError: null,
      nextAttemptAt: null,
      endedAt: at + 1000,
    });
  return run.id;
}

const auditRow = (at: number, action: string) => ({
  at,
  who: 'ci',
  whoKind: 'token' as const,
  role: 'operator' as const,
  action,
  app: 'billing',
  job: 'settle',
  run: null,
  source: 'api' as const,
  address: null,
  replica: null,
  forwarded: false,
  result: 'ok' as const,
  status: 200,
  detail: null,
});

it('deletes old runs, finished notifications and audit rows, keeps pending and newer ones, hourly', async () => {
  const events = new DaemonEmitter();
  const said: string[] = [];
  events.on('info', (e) => said.push(e.msg));
  await store.appendAudit(auditRow(T0, 'pause'));
  await store.appendAudit(auditRow(T0 + 20 * DAY, 'resume'));
  const oldRun = await failedRunNotified('old', T0, true);
  await failedRunNotified('old-pending', T0, false);
  const newRunId = await failedRunNotified('new', T0 + 20 * DAY, true);
  const retention = new Retention(store, events, 7 * DAY);

  await retention.maybePrune(T0 + 21 * DAY); // cut-off T0 + 14 days
  expect(await store.getRun(oldRun)).toBeNull();
  expect(await store.getRun(newRunId)).not.toBeNull();
  const left = await store.listNotifications({});
  expect(left.map((n) => [n.job, n.status]).sort()).toEqual([
    ['new', 'delivered'],
    ['old-pending', 'pending'],
  ]);
  expect(said).toEqual([
    expect.stringMatching(/^retention: deleted 2 run\(s\) that ended before /),
    expect.stringMatching(/^retention: deleted 1 notification\(s\) delivered or failed before /),
    expect.stringMatching(/^retention: deleted 1 audit row\(s\) recorded before /),
  ]);
  // the audit log is kept as long as runs (SPEC §18)
  expect((await store.listAudit({})).map((r) => r.action)).toEqual(['resume']);

  // a run that falls behind the cut-off half an hour later waits for the next hourly prune
  const first = T0 + 21 * DAY;
  const later = await failedRunNotified('later', T0 + 14 * DAY + 10 * 60_000, true);
  await retention.maybePrune(first + 30 * 60_000);
  expect(await store.getRun(later)).not.toBeNull();
  await retention.maybePrune(first + PRUNE_EVERY_MS);
  expect(await store.getRun(later)).toBeNull();
  expect((await store.listNotifications({})).map((n) => n.job).sort()).toEqual([
    'new',
    'old-pending',
  ]);
});
