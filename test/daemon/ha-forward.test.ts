/**
 * A verb answered with a failure is never carried out later (SPEC §10 "API on
 * any replica", finding 17), on a real PostgreSQL with replicas in this
 * process. The lease is held by a replica that does not answer (a row written
 * for a "ghost"), so a trigger sent to the standby finds no leader: after 5 s
 * the standby withdraws it and answers 503. The ghost's lease then runs out,
 * the standby leads and goes through the commands — and the withdrawn trigger
 * never runs: no run in the ledger, no request at the app, while a verb
 * forwarded afterwards by another standby is carried out.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PostgresStore } from '../../src/daemon/store/postgres.js';
import type { DaemonHandle } from '../../src/http/serve.js';
import { roleOf, startReplica } from '../helpers/ha.js';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from '../helpers/pg.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schema = schemaName('forward');
const dir = mkdtempSync(join(tmpdir(), 'cronix-ha-forward-'));
let sink: Sink;
const handles: DaemonHandle[] = [];

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({
      version: 1,
      app: 'ha',
      jobs: [
        {
          name: 'job',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/job` },
          auth: { secret_refs: ['env:S'] },
        },
      ],
    }),
  );
  const store = PostgresStore.open(withSchema(PG_URL, schema));
  await store.migrate();
  await store.close();
  await pgQuery(
    `INSERT INTO ${schema}.lease (name, holder, epoch, expires_at, acquired_at)
     VALUES ('leader', 'ghost', 1, now() + interval '1 hour', now())`,
  );
});
afterAll(async () => {
  for (const h of handles.reverse()) await h.stop(500).catch(() => undefined);
  await sink.close();
  await dropSchema(schema);
});

const start = async (replica: string): Promise<DaemonHandle> => {
  const d = await startReplica(dir, schema, replica, { S: 'ha-forward-secret-0123456789' });
  handles.push(d);
  return d;
};
const post = (d: DaemonHandle, path: string) => fetch(`${d.url}/api/v1${path}`, { method: 'POST' });

it('a trigger withdrawn after 5 s without a leader is answered 503 and never runs', async () => {
  const b = await start('b');
  expect(await roleOf(b)).toBe('standby');
  const res = await post(b, '/jobs/ha/job/trigger');
  expect(res.status).toBe(503);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('unavailable');

  // the ghost goes away: b leads and takes the commands
  await pgQuery(`UPDATE ${schema}.lease SET expires_at = now() WHERE holder = 'ghost'`);
  await until(async () => ((await roleOf(b)) === 'leader' ? true : undefined), 10_000);
  // a verb forwarded afterwards is carried out: b has been through the commands
  const c = await start('c');
  expect((await post(c, '/jobs/ha/job/pause')).status).toBeLessThan(300);
  expect((await post(c, '/jobs/ha/job/resume')).status).toBeLessThan(300);

  const runs = await pgQuery<{ n: string }>(`SELECT COUNT(*) AS n FROM ${schema}.runs`);
  expect(Number(runs[0]!.n)).toBe(0);
  expect(sink.requests).toEqual([]);
  const listed = (await (await fetch(`${b.url}/api/v1/runs`)).json()) as { runs: unknown[] };
  expect(listed.runs).toEqual([]);
}, 60_000);
