/**
 * The leader lease and the cluster on a real PostgreSQL (SPEC §10): the lease
 * statement's epochs on the database clock, and two replicas in this process
 * (real HTTP servers, real store): one leads, a standby forwards verbs to it,
 * SIGTERM-style stop hands over at once, `GET /api/v1/cluster` and metrics.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as lease from '../../src/daemon/store/pg/lease.js';
import { PostgresStore } from '../../src/daemon/store/postgres.js';
import type { DaemonHandle } from '../../src/http/serve.js';
import { startReplica } from '../helpers/ha.js';
import { dropSchema, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
});
const freshStore = async (): Promise<PostgresStore> => {
  const schema = schemaName('lease');
  schemas.push(schema);
  const store = PostgresStore.open(withSchema(PG_URL, schema));
  await store.migrate();
  return store;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the lease statement', () => {
  it('renewal keeps the epoch; another holder waits for expiry and gets the next epoch', async () => {
    const store = await freshStore();
    const a1 = await lease.acquireLease(store.pool, 'a', 800);
    expect(a1).toMatchObject({ holder: 'a', epoch: 1 });
    expect(a1!.expiresAt - a1!.dbNow).toBeGreaterThan(700);
    expect(await lease.acquireLease(store.pool, 'b', 800)).toBeNull();
    const a2 = await lease.acquireLease(store.pool, 'a', 800);
    expect(a2).toMatchObject({ holder: 'a', epoch: 1, acquiredAt: a1!.acquiredAt });
    await sleep(900);
    const b = await lease.acquireLease(store.pool, 'b', 800);
    expect(b).toMatchObject({ holder: 'b', epoch: 2 });
    expect(await lease.acquireLease(store.pool, 'a', 800)).toBeNull();
    // a released lease passes at once, and the epoch grows again
    expect(await lease.releaseLease(store.pool, 'b', 2)).toBe(true);
    expect(await lease.releaseLease(store.pool, 'b', 2)).toBe(false);
    expect(await lease.acquireLease(store.pool, 'a', 800)).toMatchObject({ holder: 'a', epoch: 3 });
    // the same holder after its own lease lapsed starts a new term too
    await sleep(900);
    expect(await lease.acquireLease(store.pool, 'a', 800)).toMatchObject({ holder: 'a', epoch: 4 });
    expect(Math.abs(await lease.measureSkew(store.pool, () => Date.now()))).toBeLessThan(1000);
    await store.close();
  });

  it('concurrent acquisitions: exactly one replica wins each epoch', async () => {
    const store = await freshStore();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => lease.acquireLease(store.pool, `r${i}`, 5000)),
    );
    const winners = results.filter((r) => r !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.epoch).toBe(1);
    await store.close();
  });
});

describe('two replicas in this process', () => {
  let sink: Sink;
  let a: DaemonHandle;
  let b: DaemonHandle;
  let schema: string;
  const secret = 'ha-secret-0123456789';
  const dir = mkdtempSync(join(tmpdir(), 'cronix-ha-'));

  beforeAll(async () => {
    sink = await startSink(() => ({ status: 200 }));
    schema = schemaName('cluster');
    schemas.push(schema);
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
    const start = (replica: string) => startReplica(dir, schema, replica, { S: secret });
    a = await start('a');
    await until(async () => ((await view(a)).self.role === 'leader' ? true : undefined));
    b = await start('b');
  });
  afterAll(async () => {
    await b?.stop(500);
    await a?.stop(500);
    await sink.close();
  });

  const view = async (d: DaemonHandle) =>
    (await (await fetch(`${d.url}/api/v1/cluster`)).json()) as {
      self: { replica: string; role: string };
      leader: { replica: string; epoch: number } | null;
      replicas: { replica: string }[];
    };

  it('one leads; both see it; a verb on the standby is carried out by the leader', async () => {
    const [va, vb] = [await view(a), await view(b)];
    expect(va.self).toEqual({ replica: 'a', role: 'leader' });
    expect(vb.self).toEqual({ replica: 'b', role: 'standby' });
    expect(vb.leader).toMatchObject({ replica: 'a', epoch: 1 });
    await until(async () => ((await view(b)).replicas.length === 2 ? true : undefined));
    const before = sink.requests.length;
    const started = performance.now();
    const res = await fetch(`${b.url}/api/v1/jobs/ha/job/trigger`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(performance.now() - started).toBeLessThan(1000); // carried out within 1 s
    const body = (await res.json()) as { run: { id: string }; admission: string };
    expect(body.admission).toBe('started');
    const req = (await sink.waitForRequests(before + 1))[before]!;
    expect(req.headers['x-cron-run-id']).toBe(body.run.id);
    expect(req.headers['x-cron-leader-epoch']).toBe('1');
    // a verb the leader refuses comes back with its error
    const missing = await fetch(`${b.url}/api/v1/runs/nope/cancel`, { method: 'POST' });
    expect(missing.status).toBe(404);
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    expect(metrics).toMatch(/^cronix_leader 1$/m);
    expect(metrics).toMatch(/^cronix_leader_epoch 1$/m);
    expect(metrics).toMatch(/^cronix_clock_skew_seconds -?\d/m);
    expect(await (await fetch(`${b.url}/metrics`)).text()).toMatch(/^cronix_leader 0$/m);
  });

  it('stopping the leader hands over within 5 s at the next epoch', async () => {
    const stoppedAt = performance.now();
    await a.stop(500);
    await until(async () => ((await view(b)).self.role === 'leader' ? true : undefined), 10_000);
    expect(performance.now() - stoppedAt).toBeLessThan(5000);
    expect((await view(b)).leader).toMatchObject({ replica: 'b', epoch: 2 });
  });
});
