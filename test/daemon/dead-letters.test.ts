/**
 * Dead letters end to end (SPEC §16): a real daemon (in-process, real HTTP, SQLite), the real
 * CLI, a real sink. 50 failed runs across 3 jobs (backfills against a failing sink); the view
 * and its counts per job; a bulk replay of one job's (dry run first) once the sink is fixed —
 * each replay succeeds and leaves the view; a dismissal with a note; bad input answered 400.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { cronixAsync } from '../helpers/cli.js';
import { until } from '../helpers/common.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;
let fixed = false;
const JOBS = { a: 20, b: 15, c: 15 } as const;

beforeAll(async () => {
  sink = await startSink(() => (fixed ? { status: 200 } : { status: 500 }));
  const dir = mkdtempSync(join(tmpdir(), 'cronix-dl-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'dl',
      jobs: Object.keys(JOBS).map((name) => ({
        name,
        schedule: '0 * * * *',
        request: { url: `${sink.url}/${name}` },
        policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
        auth: { secret_refs: ['env:DL_SECRET'] },
      })),
    }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { DL_SECRET: 'dl-test-secret-0123456789' },
  });
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers read loosely in a test
async function api(method: string, path: string, body?: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, ...((await res.json()) as object) };
}

const cli = (args: string[]) =>
  cronixAsync(args, {
    env: { ...process.env, CRONIX_URL: daemon.url, CRONIX_TOKEN: daemon.token ?? '' },
  });

it('50 failed runs across 3 jobs: view, counts, bulk replay of one job, dismissal with a note', async () => {
  const to = Date.UTC(2026, 0, 10);
  for (const [job, n] of Object.entries(JOBS)) {
    const r = await api('POST', `/api/v1/jobs/dl/${job}/backfills`, {
      from: new Date(to - n * 3_600_000).toISOString(),
      to: new Date(to).toISOString(),
      parallel: 4,
    });
    expect(r['status']).toBe(202);
  }
  await until(
    async () => {
      const v = await api('GET', '/api/v1/dead-letters?limit=1000');
      return v['dead_letters'].length === 50 ? true : undefined;
    },
    30_000,
    '50 dead letters',
  );
  const view = await api('GET', '/api/v1/dead-letters?limit=1000');
  expect(view['counts']).toEqual([
    { app: 'dl', job: 'a', count: 20 },
    { app: 'dl', job: 'b', count: 15 },
    { app: 'dl', job: 'c', count: 15 },
  ]);
  expect(new Set(view['dead_letters'].map((r: { outcome: string }) => r.outcome))).toEqual(
    new Set(['retries_exhausted']),
  );

  // the CLI's view
  const listed = await cli(['dead-letters', '--job', 'dl/b', '-o', 'json']);
  expect(listed.status, listed.stderr).toBe(0);
  expect(JSON.parse(listed.stdout).dead_letters).toHaveLength(15);
  const table = await cli(['dead-letters', '--job', 'dl/c']);
  expect(table.stdout).toContain('dead letters per job: dl/a: 20, dl/b: 15, dl/c: 15');

  // a dry run of the bulk replay of job a lists its 20, replays nothing
  const dry = await cli([
    'replay-dead-letters',
    '--job',
    'dl/a',
    '--max',
    '100',
    '--dry-run',
    '-o',
    'json',
  ]);
  expect(dry.status, dry.stderr).toBe(0);
  expect(JSON.parse(dry.stdout).dead_letters).toHaveLength(20);
  // by app: all 50 of app dl (what a token limited to apps names); an app and a job of another
  // app is a usage error
  const byApp = await cli([
    'replay-dead-letters',
    '--app',
    'dl',
    '--max',
    '100',
    '--dry-run',
    '-o',
    'json',
  ]);
  expect(byApp.status, byApp.stderr).toBe(0);
  expect(JSON.parse(byApp.stdout).dead_letters).toHaveLength(50);
  const otherApp = await cli([
    'replay-dead-letters',
    '--app',
    'shop',
    '--job',
    'dl/a',
    '--dry-run',
  ]);
  expect(otherApp.status).toBe(2);
  expect(otherApp.stderr).toContain('--job "dl/a" is not in --app "shop"');
  const before = sink.requests.length;
  fixed = true;
  const replayed = await cli([
    'replay-dead-letters',
    '--job',
    'dl/a',
    '--max',
    '100',
    '-o',
    'json',
  ]);
  expect(replayed.status, replayed.stderr).toBe(0);
  const answers = JSON.parse(replayed.stdout).replayed as {
    admission: string;
    run: { run_key: string };
  }[];
  expect(answers).toHaveLength(20);
  expect(answers.every((a) => a.admission === 'started')).toBe(true);
  await until(
    async () => {
      const v = await api('GET', '/api/v1/dead-letters?limit=1000');
      return v['dead_letters'].length === 30 ? v : undefined;
    },
    30_000,
    'job a to leave the view',
  );
  expect(sink.requests.length - before).toBe(20);
  // each replay kept its dead letter's run key (the app dedupes by it) and succeeded
  const runs = await api('GET', '/api/v1/runs?app=dl&job=a&outcome=success&limit=100');
  expect(new Set(runs['runs'].map((r: { run_key: string }) => r.run_key))).toEqual(
    new Set(answers.map((a) => a.run.run_key)),
  );

  // dismissal with a note, through the CLI: by the token's name
  const two = view['dead_letters'].filter((r: { job: string }) => r.job === 'b').slice(0, 2);
  const ids = two.map((r: { id: string }) => r.id);
  const dismissed = await cli([
    'dismiss-dead-letters',
    ...ids,
    'not-a-run',
    '--note',
    'known outage, settled by hand',
    '-o',
    'json',
  ]);
  expect(dismissed.status, dismissed.stderr).toBe(0);
  expect(JSON.parse(dismissed.stdout)).toEqual({
    dismissed: ids,
    by: 'default',
    note: 'known outage, settled by hand',
  });
  const after = await api('GET', '/api/v1/dead-letters?limit=1000');
  expect(after['counts']).toEqual([
    { app: 'dl', job: 'b', count: 13 },
    { app: 'dl', job: 'c', count: 15 },
  ]);
  const noNote = await cli(['dismiss-dead-letters', ids[0]]);
  expect(noNote.status).toBe(2);
  expect(noNote.stderr).toMatch(/--note is required/);
});

it('refuses bad input with 400 naming the field', async () => {
  const bad: [string, string, unknown, string][] = [
    ['GET', '/api/v1/dead-letters?outcome=success', undefined, 'outcome'],
    ['GET', '/api/v1/dead-letters?from=yesterday', undefined, 'from'],
    ['GET', '/api/v1/dead-letters?limit=0', undefined, 'limit'],
    ['GET', '/api/v1/dead-letters?color=red', undefined, 'color'],
    ['POST', '/api/v1/dead-letters/replay', { max: 5000 }, 'max'],
    ['POST', '/api/v1/dead-letters/replay', { dry_run: 'yes' }, 'dry_run'],
    ['POST', '/api/v1/dead-letters/dismiss', { run_ids: [], note: 'x' }, 'run_ids'],
    ['POST', '/api/v1/dead-letters/dismiss', { run_ids: ['r'], note: ' ' }, 'note'],
  ];
  for (const [method, path, body, field] of bad) {
    const r = await api(method, path, body);
    expect(r['status'], path).toBe(400);
    expect(r['error']['path']).toBe(field);
  }
});
