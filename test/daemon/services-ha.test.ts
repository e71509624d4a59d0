/**
 * Services under high availability (SPEC §10, §17), two real `cronix serve` replicas on one
 * PostgreSQL schema with a 3 s lease: only the leader runs the instances; a standby shows them
 * from the ledger and forwards a verb to the leader; after the leader is SIGKILLed, the new
 * leader starts them only once the old lease expired, and at no sampled moment (every 20 ms,
 * from `/proc`) does one instance run twice.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep, until } from '../helpers/common.js';
import { dropSchema, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { serviceProcesses, servicesDir } from './services-process.js';

const MARK = randomUUID();
const schema = schemaName('svc');
const env = { PATH: process.env['PATH'], TEST_MARK: MARK };
let dir = '';
let script = '';
const replicas: Served[] = [];

const WORKER = `console.log('up', process.env.CRONIX_INSTANCE); setInterval(() => {}, 1000);`;

/**
 * The workers by instance, with their parent (the replica that started them). Only processes
 * running the worker's script count: the lifeline's watcher (`sh -c`) and the `sleep` it runs
 * while it waits for a stopped instance to go carry the instance's environment too.
 */
function running(): Map<number, { pid: number; ppid: number }[]> {
  const out = new Map<number, { pid: number; ppid: number }[]>();
  for (const p of serviceProcesses(MARK)) {
    if (p.service !== 'worker' || p.cmdline.at(-1) !== script || p.cmdline.includes('-c')) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
    } catch {
      continue; // it exited since it was listed
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    out.set(p.instance, [...(out.get(p.instance) ?? []), { pid: p.pid, ppid }]);
  }
  return out;
}

async function replica(name: string): Promise<Served> {
  const s = await spawnServe(dir, 0, {
    env,
    dataDir: join(dir, name),
    args: ['--store', withSchema(PG_URL, schema), '--replica-id', name, '--lease-seconds', '3'],
  });
  replicas.push(s);
  return s;
}

beforeAll(async () => {
  dir = servicesDir({});
  script = join(dir, 'worker.mjs');
  writeFileSync(script, WORKER);
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      services: {
        worker: {
          argv: [process.execPath, script],
          instances: 2,
          env: { TEST_MARK: MARK },
          graceful_stop_seconds: 30,
        },
      },
    }),
  );
}, 30_000);

afterAll(async () => {
  for (const r of replicas) r.child.kill('SIGKILL');
  await dropSchema(schema).catch(() => undefined);
});

type Json = Record<string, unknown>;
const role = async (s: Served): Promise<string> =>
  ((await api(s, 'GET', '/api/v1/cluster')).json['self'] as Json)['role'] as string;

it('runs the instances on the leader only, and on the next one only after the old lease expired', async () => {
  const a = await replica('a');
  await until(async () => ((await role(a)) === 'leader' ? true : undefined), 20_000, 'a leads');
  await until(
    () => {
      const r = running();
      return r.get(0)?.[0]?.ppid === a.child.pid && r.get(1)?.[0]?.ppid === a.child.pid
        ? true
        : undefined;
    },
    20_000,
    'workers under a',
  );
  const b = await replica('b');
  await until(
    async () => ((await role(b)) === 'standby' ? true : undefined),
    20_000,
    'b stands by',
  );

  // the standby shows the leader's instances from the ledger and forwards a verb to the leader
  const seen = (await api(b, 'GET', '/api/v1/services')).json['services'] as Json[];
  const states = (seen[0]?.['instance_states'] as Json[]).map((i) => i['state']);
  expect(states).toEqual(['running', 'running']);
  const forwarded = await api(b, 'POST', '/api/v1/services/shop/worker/start', { instance: 1 });
  expect(forwarded.status).toBe(200);
  expect((forwarded.json['results'] as Json[])[0]?.['result']).toBe('skipped');
  expect([...running().values()].flat().every((p) => p.ppid === a.child.pid)).toBe(true);

  let most = 0;
  let crowd: unknown = null; // the sample where `most` was seen, for the failure's message
  let sampling = true;
  let firstOnB: number | null = null;
  const sampler = (async () => {
    while (sampling) {
      for (const [instance, list] of running()) {
        if (list.length > most) [most, crowd] = [list.length, { instance, list }];
        if (firstOnB === null && list.some((p) => p.ppid === b.child.pid)) firstOnB = Date.now();
      }
      await sleep(20);
    }
  })();
  a.child.kill('SIGKILL');
  // the dead leader's last lease, as the standby reads it from the store
  const cluster = (await api(b, 'GET', '/api/v1/cluster')).json;
  expect((cluster['leader'] as Json)['replica']).toBe('a');
  const leaseEnd = Date.parse((cluster['leader'] as Json)['lease_expires_at'] as string);
  await until(
    () => {
      const r = running();
      const underB = [...r.values()].flat().filter((p) => p.ppid === b.child.pid);
      // a sighting here counts too: the sampler may not have come round before this one
      if (firstOnB === null && underB.length > 0) firstOnB = Date.now();
      return r.get(0)?.[0]?.ppid === b.child.pid && r.get(1)?.[0]?.ppid === b.child.pid
        ? true
        : undefined;
    },
    30_000,
    'workers under b',
  );
  sampling = false;
  await sampler;
  expect(most, JSON.stringify(crowd)).toBe(1);
  expect(firstOnB).not.toBeNull();
  // the old lease expired before the new leader started anything (lease_expires_at is the
  // database's instant as of the last renewal read; the clocks are one machine's)
  expect(firstOnB!).toBeGreaterThanOrEqual(leaseEnd);
  console.log(
    `services HA: first instance on the new leader ${firstOnB! - leaseEnd} ms after the old lease expired; most copies of one instance at any sample: ${most}`,
  );
  const rows = (await api(b, 'GET', '/api/v1/runs?app=shop&job=worker')).json['runs'] as Json[];
  const crashed = rows.filter((r) => r['outcome'] === 'crashed');
  expect(crashed.length).toBeGreaterThanOrEqual(2);
  for (const r of rows.filter((x) => x['phase'] === 'running'))
    expect(Date.parse(r['started_at'] as string)).toBeGreaterThanOrEqual(leaseEnd);
}, 120_000);
