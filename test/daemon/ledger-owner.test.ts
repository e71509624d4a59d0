/**
 * One owner per ledger and no silent loss of it (SPEC §9 items 6 and 10; the adversarial
 * findings 1, 2, 3 and 11), with real `cronix serve` processes:
 *
 * - `serve.lock` deleted, a second daemon started on the same data dir: it refuses, naming the
 *   live owner; no run key is sent twice and no row of the first daemon is deleted;
 * - the ledger deleted under a running daemon: it stops dispatching and exits 1, saying so; a
 *   restart on that data dir is refused (ledger missing) unless `--init-ledger`;
 * - an empty or another ledger in its place, or a damaged one: refused at start, the file named;
 * - a shutdown while the store fails stops retrying, says how many writes were lost, exits 1.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
  closeSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSink, type Sink } from '../helpers/sink.js';
import { api, manifestDir, spawnServe, until } from '../helpers/serve.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});

/** A job firing every second (Forbid) at the sink, under its own path. */
const everySecond = (path: string) => [
  {
    name: 'tick',
    schedule: '* * * * * *',
    request: { url: `${sink.url}/${path}` },
    policy: { concurrency: 'Forbid', retries: { max_attempts: 1 } },
  },
];

const keysOf = (path: string): string[] =>
  sink.requests.filter((r) => r.url === `/${path}`).map((r) => String(r.headers['x-cron-run-key']));

it('serve.lock deleted: a second daemon refuses the ledger, naming the live owner; nothing is sent twice or deleted', async () => {
  const dir = manifestDir('own', everySecond('own'));
  const a = await spawnServe(dir);
  await until(() => (keysOf('own').length >= 2 ? true : undefined), 10_000, 'two fires');
  const runsBefore = ((await api(a, 'GET', '/api/v1/runs?limit=1000')).json['runs'] as unknown[])
    .length;
  rmSync(join(dir, 'data', 'serve.lock'));
  rmSync(join(dir, 'data', 'serve.holder'), { force: true });
  const b = await spawnServe(dir, 0, { waitListening: false });
  const { code } = await b.exited;
  expect(code).toBe(1);
  expect(b.output()).toContain(`is in use by another cronix serve (pid ${a.child.pid}`);
  // the first daemon goes on: more fires, every key once, none of its rows gone
  const seen = keysOf('own').length;
  await until(() => (keysOf('own').length >= seen + 2 ? true : undefined), 10_000, 'more fires');
  const keys = keysOf('own');
  expect(new Set(keys).size).toBe(keys.length);
  const runsAfter = (await api(a, 'GET', '/api/v1/runs?limit=1000')).json['runs'] as {
    id: string;
    phase: string;
    outcome: string | null;
  }[];
  expect(runsAfter.length).toBeGreaterThanOrEqual(runsBefore + 2);
  expect(runsAfter.filter((r) => r.outcome === 'crashed')).toEqual([]);
  a.child.kill('SIGTERM');
  expect((await a.exited).code).toBe(0);
});

it('the ledger deleted under a running daemon: it stops and exits 1; a restart is refused until --init-ledger', async () => {
  const dir = manifestDir('gone', everySecond('gone'));
  const a = await spawnServe(dir);
  await until(() => (keysOf('gone').length >= 1 ? true : undefined), 10_000, 'a fire');
  for (const f of ['ledger.sqlite', 'ledger.sqlite-wal', 'ledger.sqlite-shm'])
    rmSync(join(dir, 'data', f), { force: true });
  const { code } = await a.exited;
  expect(code).toBe(1);
  expect(a.output()).toMatch(/"event":"ledger-lost".*was deleted/);
  const sent = keysOf('gone').length;
  // refused: the data dir had a ledger
  const b = await spawnServe(dir, 0, { waitListening: false });
  expect((await b.exited).code).toBe(1);
  expect(b.output()).toContain('ledger.sqlite is missing, but this data dir had one');
  expect(b.output()).toContain('--init-ledger');
  expect(keysOf('gone')).toHaveLength(sent); // nothing fired without a ledger
  const c = await spawnServe(dir, 0, { args: ['--init-ledger'] });
  await until(() => (keysOf('gone').length > sent ? true : undefined), 10_000, 'a fire');
  c.child.kill('SIGTERM');
  expect((await c.exited).code).toBe(0);
});

it('an empty ledger, another ledger in its place, or a damaged one is refused at start, naming the file', async () => {
  const dir = manifestDir('swap', [{ ...everySecond('swap')[0], schedule: '0 0 1 1 *' }]);
  const data = join(dir, 'data');
  const first = await spawnServe(dir);
  first.child.kill('SIGTERM');
  await first.exited;
  const ledger = join(data, 'ledger.sqlite');
  const saved = join(dir, 'saved.sqlite');
  copyFileSync(ledger, saved);
  // empty (0 bytes)
  writeFileSync(ledger, '');
  const empty = await spawnServe(dir, 0, { waitListening: false });
  expect((await empty.exited).code).toBe(1);
  expect(empty.output()).toContain(`the ledger ${ledger} is empty (0 bytes)`);
  // another data dir's ledger
  const other = manifestDir('swap', [{ ...everySecond('swap')[0], schedule: '0 0 1 1 *' }]);
  const o = await spawnServe(other);
  o.child.kill('SIGTERM');
  await o.exited;
  copyFileSync(join(other, 'data', 'ledger.sqlite'), ledger);
  const swapped = await spawnServe(dir, 0, { waitListening: false });
  expect((await swapped.exited).code).toBe(1);
  expect(swapped.output()).toContain('it was replaced');
  // damaged: a page of the right ledger zeroed
  copyFileSync(saved, ledger);
  const fd = openSync(ledger, 'r+');
  writeSync(fd, Buffer.alloc(4096), 0, 4096, 4096 * 2);
  closeSync(fd);
  const damaged = await spawnServe(dir, 0, { waitListening: false });
  expect((await damaged.exited).code).toBe(1);
  expect(damaged.output()).toContain(`the ledger ${ledger} is damaged`);
  expect(damaged.output()).not.toContain('internal error');
  // the right one back: it starts
  copyFileSync(saved, ledger);
  const back = await spawnServe(dir);
  back.child.kill('SIGTERM');
  expect(await back.exited, back.output()).toEqual({ code: 0, signal: null });
});

/** Mounts a tmpfs of `kb` KiB at `dir`; false where this machine cannot mount. */
function mountTmpfs(dir: string, kb: number): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

it('a shutdown while the disk is full stops retrying, says how many writes were lost and exits 1 within the grace + 5 s', async (ctx) => {
  const dir = manifestDir('full', everySecond('full'));
  const data = join(dir, 'data');
  if (!mountTmpfs(data, 2048)) return ctx.skip('this machine cannot mount a tmpfs (needs root)');
  try {
    const a = await spawnServe(dir);
    await until(() => (keysOf('full').length >= 1 ? true : undefined), 10_000, 'a fire');
    // fill the disk: the ledger's next writes fail
    try {
      writeFileSync(join(data, 'filler'), Buffer.alloc(4 * 1024 * 1024));
    } catch {
      // ENOSPC: full, as intended
    }
    await until(
      () => (a.output().includes('"event":"store-error"') ? true : undefined),
      10_000,
      'a store error',
    );
    // after a few seconds of failing writes the daemon says it is not healthy, and why
    const health = await until(
      async () => {
        const r = await fetch(`${a.url}/healthz`);
        return r.status === 503 ? ((await r.json()) as Record<string, string>) : undefined;
      },
      15_000,
      '/healthz 503',
    );
    expect(health).toMatchObject({ status: 'failing', store: 'failing' });
    expect(health['reason']).toContain('ledger writes have been failing');
    const t0 = Date.now();
    a.child.kill('SIGTERM'); // --grace-period 1
    const { code } = await a.exited;
    expect(code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(1000 + 5000 + 2000);
    expect(a.output()).toMatch(/"event":"unflushed","writes":[1-9]/);
  } finally {
    execFileSync('umount', ['-l', data], { stdio: 'ignore' });
  }
});

it('a corrupt row makes the API answer 503 with the reason, never 500', async () => {
  const dir = manifestDir('rows', [{ ...everySecond('rows')[0], schedule: '0 0 1 1 *' }]);
  const a = await spawnServe(dir);
  const res = await api(a, 'POST', '/api/v1/jobs/rows/tick/trigger');
  const id = (res.json['run'] as { id: string }).id;
  await until(async () =>
    (await api(a, 'GET', `/api/v1/runs/${id}`)).json['phase'] === 'ended' ? true : undefined,
  );
  const db = new Database(join(dir, 'data', 'ledger.sqlite'));
  db.prepare(`UPDATE runs SET attempt_log = '{not json' WHERE id = ?`).run(id);
  db.close();
  const list = await api(a, 'GET', '/api/v1/runs');
  expect(list.status).toBe(503);
  expect(JSON.stringify(list.json)).toContain(id);
  a.child.kill('SIGTERM');
  await a.exited;
  expect(existsSync(join(dir, 'data', 'ledger.id'))).toBe(true);
  expect(readFileSync(join(dir, 'data', 'ledger.id'), 'utf8').trim()).toMatch(/^[0-9a-f-]{36}$/);
});
