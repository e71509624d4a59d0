/**
 * Freeze in a cluster (SPEC §10, §16), on a real PostgreSQL with two replicas in this process:
 * a freeze sent to the standby is forwarded to the leader, which honours it (a trigger sent to
 * either replica is recorded `skipped` with the reason); both list it; when the leader leaves,
 * the new leader reads the freeze from the store and still honours it; an unfreeze forwarded or
 * carried out there ends it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DaemonHandle } from '../../src/http/serve.js';
import { roleOf, startReplica } from '../helpers/ha.js';
import { dropSchema, schemaName } from '../helpers/pg.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schema = schemaName('hafreeze');
const dir = mkdtempSync(join(tmpdir(), 'cronix-ha-freeze-'));
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
});
afterAll(async () => {
  for (const h of handles.reverse()) await h.stop(500).catch(() => undefined);
  await sink.close();
  await dropSchema(schema);
});

const start = async (replica: string): Promise<DaemonHandle> => {
  const d = await startReplica(dir, schema, replica, { S: 'ha-freeze-secret-0123456789' });
  handles.push(d);
  return d;
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON, read loosely
async function post(d: DaemonHandle, path: string, body?: unknown): Promise<[number, any]> {
  const res = await fetch(`${d.url}/api/v1${path}`, {
    method: 'POST',
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {}),
  });
  return [res.status, await res.json()];
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON, read loosely
const freezesOf = async (d: DaemonHandle): Promise<any[]> =>
  ((await (await fetch(`${d.url}/api/v1/freezes`)).json()) as { freezes: unknown[] }).freezes;

it('a standby forwards freeze; the leader honours it; a new leader still does; unfreeze ends it', async () => {
  const a = await start('a');
  await until(async () => ((await roleOf(a)) === 'leader' ? true : undefined), 15_000);
  const b = await start('b');
  expect(await roleOf(b)).toBe('standby');

  const [status, frozen] = await post(b, '/freezes', { reason: 'incident 42' });
  expect(status).toBe(201);
  expect(frozen.freeze).toMatchObject({ app: null, job: null, reason: 'incident 42', by: 'api' });
  for (const d of [a, b]) {
    expect((await freezesOf(d)).map((f) => f.reason)).toEqual(['incident 42']);
    const [, t] = await post(d, '/jobs/ha/job/trigger');
    expect(t.admission).toBe('skipped');
    expect(t.run.error).toBe('frozen: incident 42 (by api)');
  }

  // the leader leaves: b leads, reads the freeze from the store and honours it
  await a.stop(500);
  handles.splice(handles.indexOf(a), 1);
  await until(async () => ((await roleOf(b)) === 'leader' ? true : undefined), 20_000);
  const [, t] = await post(b, '/jobs/ha/job/trigger');
  expect(t.admission).toBe('skipped');
  expect(sink.requests).toEqual([]);

  const [st, un] = await post(b, '/freezes/unfreeze', {});
  expect(st).toBe(200);
  expect(un.unfrozen.reason).toBe('incident 42');
  expect(await freezesOf(b)).toEqual([]);
  const [, ok] = await post(b, '/jobs/ha/job/trigger');
  expect(ok.admission).toBe('started');
  await until(async () => (sink.requests.length === 1 ? true : undefined), 10_000);
}, 90_000);
