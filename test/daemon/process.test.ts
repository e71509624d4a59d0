/**
 * Crash and restart with real `cronix serve` processes and a real ledger:
 * SIGKILL mid-run → the run is `crashed` on restart; SIGTERM with a
 * non-empty queue → the queue runs after restart; downtime across several
 * fires → catch-up (latest) and `missed`, and a fire whose run key already
 * succeeded is recorded `duplicate`, not sent again.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, manifestDir, spawnServe, writeManifest, type Served } from '../helpers/serve.js';
import { freePort, startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});

const serve = (dir: string, port: number): Promise<Served> => spawnServe(dir, port);
const setup = (jobs: Record<string, unknown>[]): string => manifestDir('proc', jobs);
/** The API's JSON body (these tests look at the body only). */
const call = async (
  s: Served,
  method: string,
  path: string,
  body?: object,
): Promise<Record<string, unknown>> => (await api(s, method, path, body)).json;

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
  const t = await call(a, 'POST', '/api/v1/jobs/proc/hang/trigger');
  const id = (t['run'] as Record<string, unknown>)['id'];
  await sink.waitForRequests(before + 1);
  a.child.kill('SIGKILL');
  await a.exited;
  sink.setScript(() => ({ status: 200 }));
  const b = await serve(dir, port);
  expect(await call(b, 'GET', `/api/v1/runs/${id}`)).toMatchObject({
    phase: 'ended',
    outcome: 'crashed',
  });
  b.child.kill('SIGTERM');
  expect((await b.exited).code).toBe(0);
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
  const first = await call(a, 'POST', '/api/v1/jobs/proc/q/trigger');
  const queued = [
    await call(a, 'POST', '/api/v1/jobs/proc/q/trigger'),
    await call(a, 'POST', '/api/v1/jobs/proc/q/trigger'),
  ];
  expect(first['admission']).toBe('started');
  expect(queued.map((q) => q['admission'])).toEqual(['queued', 'queued']);
  a.child.kill('SIGTERM'); // grace 1 s < 3 s: the running attempt is stopped, the queue stays persisted
  expect((await a.exited).code).toBe(0);
  sink.setScript(() => ({ status: 200 }));
  const b = await serve(dir, port);
  const ids = queued.map((q) => (q['run'] as Record<string, unknown>)['id']);
  let runs: Record<string, unknown>[] = [];
  for (let i = 0; i < 100; i++) {
    runs = await Promise.all(ids.map((id) => call(b, 'GET', `/api/v1/runs/${id}`)));
    if (runs.every((r) => r['phase'] === 'ended')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(runs.map((r) => r['outcome'])).toEqual(['success', 'success']);
  b.child.kill('SIGTERM');
  await b.exited;
}, 60_000);

it('downtime across several fires → catch-up (latest; all) and missed; a fired instant never fires again', async () => {
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
      runs = (await call(s, 'GET', '/api/v1/runs?limit=1000'))['runs'] as Record<string, unknown>[];
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
  // the same downtime once more (checkpoints lost): every instant already has its row, so
  // nothing is recorded or sent again
  rewind(minute - 5 * 60_000);
  const sent = sink.requests.filter((r) => r.url === '/tock').length;
  const rowsBefore = runs.filter((r) => r['job'] === 'tock').length;
  const c = await serve(dir, port);
  await new Promise((r) => setTimeout(r, 1500));
  runs = (await call(c, 'GET', '/api/v1/runs?job=tock&app=proc&limit=1000'))['runs'] as Record<
    string,
    unknown
  >[];
  const perInstant = new Map<unknown, number>();
  for (const r of runs)
    perInstant.set(r['scheduled_time'], (perInstant.get(r['scheduled_time']) ?? 0) + 1);
  expect([...perInstant.values()].every((n) => n === 1)).toBe(true);
  // at most the fire of a minute that began meanwhile is new
  expect(runs.length - rowsBefore).toBeLessThanOrEqual(1);
  expect(sink.requests.filter((r) => r.url === '/tock').length - sent).toBeLessThanOrEqual(1);
  c.child.kill('SIGTERM');
  await c.exited;
}, 90_000);

it('SIGHUP reloads the manifests; a bad manifest keeps the old set running and logs every error', async () => {
  const dir = setup([{ name: 'one', schedule: '0 0 1 1 *', request: { url: `${sink.url}/one` } }]);
  const port = await freePort();
  const s = await serve(dir, port);
  const names = async () =>
    ((await call(s, 'GET', '/api/v1/jobs'))['jobs'] as Record<string, unknown>[])
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
  // a valid manifest whose secret ref does not resolve is refused the same way
  writeManifest(dir, 'proc', [
    { name: 'one', schedule: '0 0 1 1 *', request: { url: `${sink.url}/one` } },
    {
      name: 'three',
      schedule: '0 0 1 1 *',
      request: { url: `${sink.url}/three` },
      auth: { secret_refs: ['env:NOT_SET_ANYWHERE'] },
    },
  ]);
  s.child.kill('SIGHUP');
  for (let i = 0; i < 50 && !s.output().includes('NOT_SET_ANYWHERE'); i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(s.output()).toMatch(
    /"event":"reload-failed".*job proc\/three: secret ref env:NOT_SET_ANYWHERE: env var NOT_SET_ANYWHERE is not set; keeping the previous manifests/,
  );
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
  expect((await s.exited).code).toBe(0);
}, 60_000);
