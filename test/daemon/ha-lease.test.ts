/**
 * The cluster on a real PostgreSQL (SPEC §10): two replicas in this process
 * (real HTTP servers, real store): one leads, a standby forwards verbs to it,
 * SIGTERM-style stop hands over at once, `GET /api/v1/cluster`, `/healthz` and
 * metrics. The lease itself (epochs, incarnations, the fence, commands) is the
 * coordination contract's (`coordination.test.ts`).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonHandle } from '../../src/http/serve.js';
import { startReplica } from '../helpers/ha.js';
import { dropSchema, schemaName } from '../helpers/pg.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
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
    const health = async (d: DaemonHandle) =>
      (await (await fetch(`${d.url}/healthz`)).json()) as object;
    expect(await health(a)).toMatchObject({ status: 'ok', role: 'leader' });
    expect(await health(b)).toMatchObject({ status: 'ok', role: 'standby' });
  });

  it('stopping the leader hands over within 5 s at the next epoch', async () => {
    const stoppedAt = performance.now();
    await a.stop(500);
    await until(async () => ((await view(b)).self.role === 'leader' ? true : undefined), 10_000);
    expect(performance.now() - stoppedAt).toBeLessThan(5000);
    expect((await view(b)).leader).toMatchObject({ replica: 'b', epoch: 2 });
  });
});
