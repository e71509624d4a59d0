/**
 * Calendars in a cluster (SPEC §10, §16), on a real PostgreSQL with two replicas in this process
 * and the real clock: a skip sent to the standby is forwarded to the leader and durable; both
 * replicas show it; the leader leaves before the instant, and the new leader — reading the skip
 * from the store — records that fire `skipped` (`skip: by api`), and the fire inside a blackout
 * window `skipped` too: each instant once, nothing sent for either, the next fire runs.
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

const schema = schemaName('hacal');
const dir = mkdtempSync(join(tmpdir(), 'cronix-ha-cal-'));
const STEP = 10_000;
let sink: Sink;
const handles: DaemonHandle[] = [];
/** The fire skipped, the fire in the blackout window, and the fire after them. */
let skipped: number;
let blackout: number;
let after: number;
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
  skipped = Math.ceil((Date.now() + 35_000) / STEP) * STEP;
  blackout = skipped + STEP;
  after = blackout + STEP;
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({
      version: 1,
      app: 'ha',
      jobs: [
        {
          name: 'job',
          schedule: '*/10 * * * * *',
          request: { url: `${sink.url}/job` },
          auth: { secret_refs: ['env:S'] },
          policy: {
            catchup: { mode: 'all' },
            blackout: [{ from: iso(blackout), to: iso(blackout + 1000) }],
          },
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
  const d = await startReplica(dir, schema, replica, { S: 'ha-calendar-secret-0123456789' });
  handles.push(d);
  return d;
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON, read loosely
type Json = any;
async function call(
  d: DaemonHandle,
  method: string,
  path: string,
  body?: unknown,
): Promise<[number, Json]> {
  const res = await fetch(`${d.url}/api/v1${path}`, {
    method,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {}),
  });
  return [res.status, await res.json()];
}

it('a standby forwards skip; the next leader skips that fire and the blackout one, once each', async () => {
  const a = await start('a');
  await until(async () => ((await roleOf(a)) === 'leader' ? true : undefined), 15_000);
  const b = await start('b');
  expect(await roleOf(b)).toBe('standby');

  const [status, s] = await call(b, 'POST', '/jobs/ha/job/skip', { at: iso(skipped) });
  expect(status).toBe(201);
  expect(s.skip).toMatchObject({ app: 'ha', job: 'job', at: iso(skipped), by: 'api' });
  // the leader has it at once; the standby's view follows the store
  for (const d of [a, b])
    await until(async () => {
      const [, job] = await call(d, 'GET', '/jobs/ha/job');
      return job.skips.length === 1 && job.skips[0].at === iso(skipped) ? true : undefined;
    }, 10_000);

  // the leader leaves before the instant; b leads and reads the skip from the store
  expect(Date.now()).toBeLessThan(skipped);
  await a.stop(500);
  handles.splice(handles.indexOf(a), 1);
  await until(async () => ((await roleOf(b)) === 'leader' ? true : undefined), 20_000);

  const runsAt = async (t: number) => {
    const [, r] = await call(b, 'GET', '/runs?app=ha&job=job&limit=1000');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON
    return (r.runs as any[]).filter((x) => x.scheduled_time === iso(t));
  };
  await until(
    async () => ((await runsAt(after)).some((r) => r.outcome === 'success') ? true : undefined),
    after - Date.now() + 20_000,
  );
  const [one] = await runsAt(skipped);
  expect(await runsAt(skipped)).toHaveLength(1);
  expect([one.outcome, one.error]).toEqual(['skipped', 'skip: by api']);
  const [two] = await runsAt(blackout);
  expect(await runsAt(blackout)).toHaveLength(1);
  expect([two.outcome, two.error]).toEqual([
    'skipped',
    `blackout: window 0 (${iso(blackout)} to ${iso(blackout + 1000)})`,
  ]);
  const [, job] = await call(b, 'GET', '/jobs/ha/job');
  expect(job.skips).toEqual([]);
  // nothing was sent for either instant (a request's X-Cron-Fire-Time names its fire, in Unix seconds)
  const sentFor = sink.requests.map((r) => r.headers['x-cron-fire-time']);
  const unix = (t: number): string => String(t / 1000);
  expect(sentFor).toContain(unix(after));
  expect(sentFor).not.toContain(unix(skipped));
  expect(sentFor).not.toContain(unix(blackout));
}, 120_000);
