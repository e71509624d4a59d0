/**
 * A backfill across a failover (SPEC §16, §10): two real `cronix serve` replicas on one
 * PostgreSQL schema, a real HTTP sink. The leader runs a 300-instant backfill with
 * `--parallel 4`; it is SIGKILLed a third of the way in. The other replica takes over the lease
 * and the backfill with it: it ends `done`, every key succeeded exactly once in the ledger, and
 * the only keys the sink saw twice are those in flight at the kill (ended `crashed`, run again
 * with the same run key), never more than 4 requests at once at the sink across the failover.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dropSchema, pgQuery, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import {
  api,
  leaderOf,
  manifestDir,
  maxOverlap,
  servedRole,
  spawnServe,
  until,
  type Served,
} from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schema = schemaName('habf');
const N = 300;
// every minute of 1 January only: no scheduled fire comes while the test runs (the pause is
// answered only after the replicas are up, and a fire at a minute boundary before it would count)
const FROM = Date.UTC(2026, 0, 1);
const TO = FROM + N * 60_000;
let sink: Sink;
let dir: string;
const replicas: Served[] = [];

function start(i: number): Promise<Served> {
  return spawnServe(dir, 0, {
    dataDir: join(dir, `data-${i}`),
    args: ['--store', withSchema(PG_URL, schema), '--replica-id', `r${i}`, '--lease-seconds', '3'],
  });
}

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200, delayMs: 15 }));
  dir = manifestDir('habf', [
    {
      name: 'ok',
      schedule: '* * 1 1 *',
      request: { url: `${sink.url}/ok` },
      policy: { concurrency: 'Allow', retries: { max_attempts: 1 }, timeout_seconds: 10 },
    },
  ]);
  replicas.push(await start(0), await start(1));
}, 60_000);

afterAll(async () => {
  for (const s of replicas) s.child.kill('SIGKILL');
  await sink?.close();
  await dropSchema(schema);
});

it('a failover in the middle of a backfill: it resumes on the new leader, each key succeeds once, ≤ 4 at once', async () => {
  const leader = await leaderOf(replicas);
  const other = replicas.find((s) => s !== leader)!;
  // the scheduled fires stay out of the way (a paused job is still backfilled)
  expect((await api(leader, 'POST', '/api/v1/jobs/habf/ok/pause')).status).toBe(200);
  const started = await api(leader, 'POST', '/api/v1/jobs/habf/ok/backfills', {
    from: new Date(FROM).toISOString(),
    to: new Date(TO).toISOString(),
    parallel: 4,
  });
  expect(started.status, JSON.stringify(started.json)).toBe(202);
  const id = (started.json['backfill'] as { id: string }).id;

  const atSink = () => sink.requests.filter((r) => r.url === '/ok');
  await until(() => (atSink().length >= N / 3 ? true : undefined), 60_000, 'a third of it');
  leader.child.kill('SIGKILL');
  await leader.exited;
  const beforeFailover = atSink().length;
  expect(beforeFailover).toBeLessThan(N);

  await until(
    async () => ((await servedRole(other)) === 'leader' ? true : undefined),
    30_000,
    'failover',
  );
  const done = await until(
    async () => {
      const b = (await api(other, 'GET', `/api/v1/backfills/${id}`)).json;
      return b['state'] !== 'running' ? b : undefined;
    },
    120_000,
    'the backfill to end on the new leader',
  );
  expect(done['state']).toBe('done');
  expect(done['counts']).toEqual({ pending: 0, active: 0, succeeded: N, failed: 0, other: 0 });

  const rows = (await pgQuery(
    `SELECT run_key AS k, outcome FROM ${schema}.runs WHERE app = 'habf' AND job = 'ok'`,
  )) as { k: string; outcome: string }[];
  const succeeded = rows.filter((r) => r.outcome === 'success').map((r) => r.k);
  expect(succeeded).toHaveLength(N);
  expect(new Set(succeeded).size).toBe(N);
  expect(rows.every((r) => r.outcome === 'success' || r.outcome === 'crashed')).toBe(true);
  const crashed = new Set(rows.filter((r) => r.outcome === 'crashed').map((r) => r.k));
  expect(crashed.size).toBeLessThanOrEqual(4);
  const keys = atSink().map((r) => String(r.headers['x-cron-run-key']));
  expect(new Set(keys)).toEqual(new Set(succeeded));
  const twice = keys.filter((k, i) => keys.indexOf(k) !== i);
  for (const k of twice) expect(crashed.has(k), `${k} was sent twice but never crashed`).toBe(true);
  expect(maxOverlap(atSink())).toBeLessThanOrEqual(4);
  console.log(
    `ha backfill: ${beforeFailover} requests before the failover, ${crashed.size} crashed and run again, ${keys.length} requests in all`,
  );
}, 240_000);
