/**
 * Crash and restart with real `cronix serve` processes and a real ledger:
 * SIGKILL mid-run → the run is `crashed` on restart; SIGTERM with a
 * non-empty queue → the queue runs after restart; downtime across several
 * fires → catch-up (latest) and `missed`, and a fire whose run key already
 * succeeded is recorded `duplicate`, not sent again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { freePort, startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});

interface Served {
  child: ChildProcess;
  url: string;
  token: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function serve(dir: string, port: number): Promise<Served> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      join(dir, 'manifest.json'),
      '--data-dir',
      join(dir, 'data'),
      '--listen',
      `127.0.0.1:${port}`,
      '--grace-period',
      '1',
    ],
    {
      env: { PATH: process.env['PATH'], CRON_SECRET: 'proc-secret' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  for (let i = 0; i < 200 && !out.includes('"event":"listening"'); i++)
    await new Promise((r) => setTimeout(r, 50));
  if (!out.includes('"event":"listening"')) throw new Error(`daemon did not start: ${out}`);
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    token: readFileSync(join(dir, 'data', 'token'), 'utf8').trim(),
    output: () => out,
    exited,
  };
}

async function api(
  s: Served,
  method: string,
  path: string,
  body?: object,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return (await res.json()) as Record<string, unknown>;
}

function setup(jobs: Record<string, unknown>[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-proc-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'proc',
      jobs: jobs.map((j) => ({ auth: { secret_refs: ['env:CRON_SECRET'] }, ...j })),
    }),
  );
  return dir;
}

it('SIGKILL mid-run → the run is crashed on restart', async () => {
  const dir = setup([
    {
      name: 'hang',
      schedule: '0 0 1 1 *',
      request: { url: `${sink.url}/hang` },
      policy: { timeout_seconds: 60, retries: { max_attempts: 1 } },
    },
  ]);
  const port = await freePort();
  sink.setScript(() => ({ hang: true }));
  const before = sink.requests.length;
  const a = await serve(dir, port);
  const t = await api(a, 'POST', '/api/v1/jobs/proc/hang/trigger');
  const id = (t['run'] as Record<string, unknown>)['id'];
  await sink.waitForRequests(before + 1);
  a.child.kill('SIGKILL');
  await a.exited;
  sink.setScript(() => ({ status: 200 }));
  const b = await serve(dir, port);
  expect(await api(b, 'GET', `/api/v1/runs/${id}`)).toMatchObject({
    phase: 'ended',
    outcome: 'crashed',
  });
  b.child.kill('SIGTERM');
  expect(await b.exited).toBe(0);
}, 60_000);

it('SIGTERM with a non-empty queue → the queue survives and runs after restart', async () => {
  const dir = setup([
    {
      name: 'q',
      schedule: '0 0 1 1 *',
      request: { url: `${sink.url}/q` },
      policy: { concurrency: 'Enqueue', timeout_seconds: 60, retries: { max_attempts: 1 } },
    },
  ]);
  const port = await freePort();
  sink.setScript(() => ({ status: 200, delayMs: 3000 }));
  const a = await serve(dir, port);
  const first = await api(a, 'POST', '/api/v1/jobs/proc/q/trigger');
  const queued = [
    await api(a, 'POST', '/api/v1/jobs/proc/q/trigger'),
    await api(a, 'POST', '/api/v1/jobs/proc/q/trigger'),
  ];
  expect(first['admission']).toBe('started');
  expect(queued.map((q) => q['admission'])).toEqual(['queued', 'queued']);
  a.child.kill('SIGTERM'); // grace 1 s < 3 s: the running attempt is stopped, the queue stays persisted
  expect(await a.exited).toBe(0);
  sink.setScript(() => ({ status: 200 }));
  const b = await serve(dir, port);
  const ids = queued.map((q) => (q['run'] as Record<string, unknown>)['id']);
  let runs: Record<string, unknown>[] = [];
  for (let i = 0; i < 100; i++) {
    runs = await Promise.all(ids.map((id) => api(b, 'GET', `/api/v1/runs/${id}`)));
    if (runs.every((r) => r['phase'] === 'ended')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(runs.map((r) => r['outcome'])).toEqual(['success', 'success']);
  b.child.kill('SIGTERM');
  await b.exited;
}, 60_000);

it('downtime across several fires → catch-up (latest; all) and missed; succeeded keys become duplicates', async () => {
  const policy = { concurrency: 'Allow', retries: { max_attempts: 1 } };
  const dir = setup([
    { name: 'tick', schedule: '* * * * *', request: { url: `${sink.url}/tick` }, policy },
    {
      name: 'tock',
      schedule: '* * * * *',
      request: { url: `${sink.url}/tock` },
      policy: { ...policy, catchup: { mode: 'all' } },
    },
  ]);
  const port = await freePort();
  sink.setScript(() => ({ status: 200 }));
  const a = await serve(dir, port);
  a.child.kill('SIGTERM');
  await a.exited;
  // five minutes of downtime: move the scheduler checkpoints back
  const rewind = (to: number): void => {
    const db = new Database(join(dir, 'data', 'ledger.sqlite'));
    db.prepare('UPDATE checkpoints SET at = ?').run(to);
    db.close();
  };
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  rewind(minute - 5 * 60_000);
  const b = await serve(dir, port);
  const ended = async (s: Served, want: (runs: Record<string, unknown>[]) => boolean) => {
    let runs: Record<string, unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      runs = (await api(s, 'GET', '/api/v1/runs?limit=1000'))['runs'] as Record<string, unknown>[];
      if (want(runs)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return runs;
  };
  const caughtUp = (job: string) => (runs: Record<string, unknown>[]) =>
    runs.filter((r) => r['job'] === job && r['trigger'] === 'catchup');
  let runs = await ended(
    b,
    (rs) =>
      caughtUp('tick')(rs).some((r) => r['phase'] === 'ended') &&
      caughtUp('tock')(rs).length >= 5 &&
      caughtUp('tock')(rs).every((r) => r['phase'] === 'ended'),
  );
  const tick = caughtUp('tick')(runs);
  expect(tick).toHaveLength(1);
  expect(tick[0]?.['outcome']).toBe('success');
  expect(Date.parse(tick[0]?.['scheduled_time'] as string)).toBeGreaterThanOrEqual(minute); // the latest missed fire
  expect(
    runs.filter((r) => r['job'] === 'tick' && r['outcome'] === 'missed').length,
  ).toBeGreaterThanOrEqual(4);
  const tock = caughtUp('tock')(runs);
  expect(tock.length).toBeGreaterThanOrEqual(5);
  expect(tock.every((r) => r['outcome'] === 'success')).toBe(true);
  b.child.kill('SIGTERM');
  await b.exited;
  // the same downtime once more: every key that already succeeded is a duplicate, not sent again
  rewind(minute - 5 * 60_000);
  const sent = sink.requests.filter((r) => r.url === '/tock').length;
  const c = await serve(dir, port);
  runs = await ended(
    c,
    (rs) => rs.filter((r) => r['job'] === 'tock' && r['outcome'] === 'duplicate').length >= 5,
  );
  const dups = runs.filter((r) => r['job'] === 'tock' && r['outcome'] === 'duplicate');
  expect(dups.length).toBeGreaterThanOrEqual(5);
  expect(new Set(dups.map((r) => r['run_key']))).toEqual(new Set(tock.map((r) => r['run_key'])));
  // at most a fire of a minute that began meanwhile was sent
  expect(sink.requests.filter((r) => r.url === '/tock').length - sent).toBeLessThanOrEqual(1);
  c.child.kill('SIGTERM');
  await c.exited;
}, 90_000);

it('SIGHUP reloads the manifests; a bad manifest keeps the old set running and logs every error', async () => {
  const dir = setup([{ name: 'one', schedule: '0 0 1 1 *', request: { url: `${sink.url}/one` } }]);
  const port = await freePort();
  const s = await serve(dir, port);
  const names = async () =>
    ((await api(s, 'GET', '/api/v1/jobs'))['jobs'] as Record<string, unknown>[])
      .map((j) => j['job'])
      .sort();
  expect(await names()).toEqual(['one']);
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'proc',
      jobs: [{ name: 'Bad', schedule: '61 * * * *', request: { url: 'ftp://x' } }],
    }),
  );
  s.child.kill('SIGHUP');
  for (let i = 0; i < 50 && !s.output().includes('reload-failed'); i++)
    await new Promise((r) => setTimeout(r, 100));
  const failures = s
    .output()
    .split('\n')
    .filter((l) => l.includes('"event":"reload-failed"'));
  expect(failures.map((l) => JSON.parse(l).path).sort()).toEqual([
    'jobs/0/name',
    'jobs/0/request/url',
    'jobs/0/schedule',
  ]);
  expect(await names()).toEqual(['one']);
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'proc',
      jobs: ['one', 'two'].map((name) => ({
        name,
        schedule: '0 0 1 1 *',
        request: { url: `${sink.url}/${name}` },
        auth: { secret_refs: ['env:CRON_SECRET'] },
      })),
    }),
  );
  s.child.kill('SIGHUP');
  for (let i = 0; i < 50 && (await names()).length < 2; i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(await names()).toEqual(['one', 'two']);
  s.child.kill('SIGTERM');
  expect(await s.exited).toBe(0);
}, 60_000);
