/**
 * Backfill with real processes (SPEC §16): a real `cronix serve` on SQLite, the real CLI, a real
 * HTTP sink. A backfill of 1,000 instants with `--parallel 4`: its dry run is exactly what
 * reaches the sink, never more than 4 requests at once; the daemon is SIGKILLed in the middle
 * and restarted: the backfill resumes, every key succeeds exactly once in the ledger, and the
 * only keys the sink saw twice are those whose first run was in flight at the kill (ended
 * `crashed`, run again: the `Idempotency-Key` the app dedupes by is the same). Then the safety
 * gate: against a failing sink, `--stop-after-failures 3 --wait` stops after 3 failures and says
 * so (exit 1).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cronixAsync } from '../helpers/cli.js';
import { api, manifestDir, maxOverlap, spawnServe, until, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
const served: Served[] = [];
beforeAll(async () => {
  sink = await startSink((_i, r) =>
    r.url === '/fail' ? { status: 500 } : { status: 200, delayMs: 10 },
  );
});
afterAll(async () => {
  for (const s of served) s.child.kill('SIGKILL');
  await sink.close();
});

const N = 1000;
// every minute of 1 January only: no scheduled fire comes while the test runs (a pause is
// answered only after the daemon is up, and a fire at a minute boundary before it would count)
const FROM = Date.UTC(2026, 0, 1);
const TO = FROM + N * 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();

it('a 1,000-instant backfill with --parallel 4 survives a SIGKILL: dry run = what ran, each key succeeded once, ≤ 4 at once', async () => {
  const dir = manifestDir(
    'bfp',
    ['ok', 'fail'].map((name) => ({
      name,
      schedule: '* * 1 1 *',
      request: { url: `${sink.url}/${name}` },
      policy: { concurrency: 'Allow', retries: { max_attempts: 1 }, timeout_seconds: 10 },
    })),
  );
  const dataDir = join(dir, 'data');
  let s = await spawnServe(dir, 0, { dataDir });
  served.push(s);
  const env = (x: Served) => ({ ...process.env, CRONIX_URL: x.url, CRONIX_TOKEN: x.token });
  // the scheduled fires stay out of the way (a paused job is still backfilled)
  for (const job of ['ok', 'fail'])
    expect((await api(s, 'POST', `/api/v1/jobs/bfp/${job}/pause`)).status).toBe(200);

  const range = ['--from', iso(FROM), '--to', iso(TO)];
  const dry = await cronixAsync(['backfill', 'bfp/ok', ...range, '--dry-run', '-o', 'json'], {
    env: env(s),
  });
  expect(dry.status, dry.stderr).toBe(0);
  const planned = (JSON.parse(dry.stdout) as { runs: { run_key: string }[] }).runs.map(
    (r) => r.run_key,
  );
  expect(planned).toHaveLength(N);
  expect(new Set(planned).size).toBe(N);

  const started = await cronixAsync(
    ['backfill', 'bfp/ok', ...range, '--parallel', '4', '-o', 'json'],
    { env: env(s) },
  );
  expect(started.status, started.stderr).toBe(0);
  const backfill = (JSON.parse(started.stdout) as { backfill: { id: string; created_by: string } })
    .backfill;
  expect(backfill.created_by).toBe('default'); // the token's name

  const atSink = () => sink.requests.filter((r) => r.url === '/ok');
  await until(() => (atSink().length >= N / 3 ? true : undefined), 60_000, 'a third of it');
  s.child.kill('SIGKILL');
  await s.exited;
  const beforeRestart = atSink().length;
  expect(beforeRestart).toBeLessThan(N);

  s = await spawnServe(dir, 0, { dataDir });
  served.push(s);
  const done = await until(
    async () => {
      const b = (await api(s, 'GET', `/api/v1/backfills/${backfill.id}`)).json;
      return b['state'] !== 'running' ? b : undefined;
    },
    120_000,
    'the backfill to end after the restart',
  );
  expect(done['state']).toBe('done');
  expect(done['counts']).toEqual({ pending: 0, active: 0, succeeded: N, failed: 0, other: 0 });

  // the safety gate, while this daemon runs: 3 failures, then it stops and says so
  const gated = await cronixAsync(
    ['backfill', 'bfp/fail', ...range, '--stop-after-failures', '3', '--wait'],
    { env: env(s) },
  );
  expect(gated.status).toBe(1);
  expect(gated.stdout).toMatch(/stopped after 3 failed run\(s\)/);
  const failed = sink.requests
    .filter((r) => r.url === '/fail')
    .map((r) =>
      ['run-key', 'run-id', 'attempt', 'fire-time'].map((h) => r.headers[`x-cron-${h}`]).join(' '),
    );
  expect(failed, failed.join('\n')).toHaveLength(3);
  const list = await cronixAsync(['backfills', '--job', 'bfp/fail', '-o', 'json'], {
    env: env(s),
  });
  expect(JSON.parse(list.stdout)).toMatchObject({
    backfills: [{ state: 'stopped', counts: { failed: 3, pending: N - 3 } }],
  });

  s.child.kill('SIGTERM');
  await s.exited;
  // what reached the sink is the dry run; keys seen twice are exactly those that crashed
  const keys = atSink().map((r) => String(r.headers['x-cron-run-key']));
  expect(new Set(keys)).toEqual(new Set(planned));
  const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
  const db = new Database(join(dataDir, 'ledger.sqlite'), { readonly: true });
  const rows = db
    .prepare(`SELECT run_key AS k, outcome FROM runs WHERE app = 'bfp' AND job = 'ok'`)
    .all() as { k: string; outcome: string }[];
  db.close();
  const crashed = new Set(rows.filter((r) => r.outcome === 'crashed').map((r) => r.k));
  expect(crashed.size).toBeLessThanOrEqual(4);
  for (const k of twice) expect(crashed.has(k)).toBe(true);
  const succeeded = rows.filter((r) => r.outcome === 'success').map((r) => r.k);
  expect(succeeded.sort()).toEqual([...planned].sort());
  expect(rows.every((r) => r.outcome === 'success' || r.outcome === 'crashed')).toBe(true);
  // never more than 4 at once at the sink, across the kill and the restart
  expect(maxOverlap(atSink())).toBeLessThanOrEqual(4);
  expect(maxOverlap(atSink())).toBeGreaterThan(1);
  console.log(
    `backfill: ${beforeRestart} requests before the kill, ${crashed.size} crashed and run again, ${keys.length} requests in all`,
  );
}, 240_000);
