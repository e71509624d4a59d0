/**
 * `runOnce` under real concurrency, on SQLite and PostgreSQL: app replicas are real processes
 * (test/sdk/fixtures/run-once-app.ts: Express + the cronix middleware + runOnce) sharing one
 * database; signed deliveries of one run key arrive 50 at a time across replicas, a replica is
 * SIGKILLed inside the job's transaction, the daemon's leader fails over (epoch 1 → 2) while the
 * deposed leader goes on sending. The side effect (a row in `effects`) must happen once.
 */
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/contract/signature.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir, until } from '../helpers/common.js';
import { dropSchema, PG_URL, pgQuery, schemaName } from '../helpers/pg.js';

const SECRET = 'run-once-secret-0123456789';
const APP = join(REPO_ROOT, 'test/sdk/fixtures/run-once-app.ts');
const children = new Set<ChildProcess>();
const schemas: string[] = [];

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  for (const s of schemas) await dropSchema(s);
});

interface Replica {
  child: ChildProcess;
  port: number;
  /** How many deliveries have entered `fn` so far. */
  inFn(): number;
}

async function replica(store: string, holdMs: number): Promise<Replica> {
  const child = spawn(process.execPath, ['--import', 'tsx', APP, store, String(holdMs)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  // a loaded machine compiles the fixture (tsx) slowly; a replica that died says why
  const port = await until(
    () => /"port":(\d+)/.exec(out)?.[1],
    60_000,
    'the app replica to listen',
  ).catch((e: Error) => {
    throw new Error(
      `${e.message} (exit ${child.exitCode}, signal ${child.signalCode}): ${err.slice(-2000)}`,
    );
  });
  return { child, port: Number(port), inFn: () => out.split('"in-fn"').length - 1 };
}

interface Delivery {
  runKey: string;
  epoch?: number;
  token?: number;
  fail?: boolean;
}
interface Answer {
  status: number;
  outcome: string | null;
  body: string;
}

/** One signed trigger attempt, as the shim or daemon sends it. */
async function deliver(r: Replica, d: Delivery): Promise<Answer> {
  const body = '{"job":"bill"}';
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-cron-run-key': d.runKey,
    'x-cron-signature': sign({
      secret: SECRET,
      method: 'POST',
      path: '/job',
      body,
      timestamp: Math.floor(Date.now() / 1000),
    }),
  };
  if (d.epoch !== undefined) headers['x-cron-leader-epoch'] = String(d.epoch);
  if (d.token !== undefined) headers['x-cron-fencing-token'] = String(d.token);
  if (d.fail) headers['x-test-fail'] = '1';
  const res = await fetch(`http://127.0.0.1:${r.port}/job`, { method: 'POST', headers, body });
  return {
    status: res.status,
    outcome: res.headers.get('x-cron-run-once'),
    body: await res.text(),
  };
}

const count = (answers: Answer[], outcome: string): number =>
  answers.filter((a) => a.outcome === outcome).length;

interface Store {
  url: string;
  effects(runKey: string): Promise<number>;
  row(runKey: string): Promise<Record<string, unknown> | undefined>;
}

function sqliteStore(): Store {
  const file = join(tempDir('run-once'), 'app.sqlite');
  const read = <T>(f: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true, timeout: 30_000 });
    try {
      return f(db);
    } finally {
      db.close();
    }
  };
  return {
    url: `sqlite:${file}`,
    effects: async (k) =>
      read(
        (db) =>
          (
            db.prepare('SELECT count(*) AS n FROM effects WHERE run_key = ?').get(k) as {
              n: number;
            }
          ).n,
      ),
    row: async (k) =>
      read(
        (db) =>
          db.prepare('SELECT * FROM cronix_runs WHERE run_key = ?').get(k) as
            Record<string, unknown> | undefined,
      ),
  };
}

function pgStore(): Store {
  const schema = schemaName('runonce');
  schemas.push(schema);
  return {
    url: `${PG_URL}#${schema}`,
    effects: async (k) =>
      Number(
        (await pgQuery(`SELECT count(*) AS n FROM ${schema}.effects WHERE run_key = $1`, [k]))[0]?.[
          'n'
        ],
      ),
    row: async (k) =>
      (await pgQuery(`SELECT * FROM ${schema}.cronix_runs WHERE run_key = $1`, [k]))[0],
  };
}

describe.each([
  ['SQLite', sqliteStore],
  ['PostgreSQL', pgStore],
] as const)('runOnce on %s', (name, makeStore) => {
  let store: Store;
  const setup = async (): Promise<void> => {
    store = makeStore();
    if (name === 'PostgreSQL') {
      const schema = store.url.split('#')[1] as string;
      await pgQuery(`CREATE SCHEMA ${schema}`);
      // created once here: two replicas' concurrent CREATE TABLE IF NOT EXISTS can collide on
      // PostgreSQL's catalog (23505 on pg_type), which is the test's race, not runOnce's
      await pgQuery(`CREATE TABLE ${schema}.effects (run_key text, pid integer)`);
    }
  };

  it('50 parallel deliveries across two replicas: one side effect, 49 stored answers', async () => {
    await setup();
    const [a, b] = await Promise.all([replica(store.url, 100), replica(store.url, 100)]);
    const runKey = 'billing/bill#2026-01-01T00:00:00Z#c0ffee';
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => deliver(i % 2 === 0 ? a : b, { runKey, epoch: 3 })),
    );
    expect(answers.map((x) => x.status)).toEqual(Array(50).fill(200));
    expect(count(answers, 'executed')).toBe(1);
    expect(count(answers, 'duplicate')).toBe(49);
    expect(new Set(answers.map((x) => x.body)).size).toBe(1);
    expect(await store.effects(runKey)).toBe(1);
    expect(await store.row(runKey)).toMatchObject({ state: 'succeeded', duplicates: 49 });
    a.child.kill('SIGKILL');
    b.child.kill('SIGKILL');
  }, 90_000);

  it('a replica killed inside the transaction, then a leader failover with the deposed leader still sending: one side effect', async () => {
    await setup();
    // A holds its transaction 3 s: long enough to be killed inside it; a PostgreSQL backend whose
    // client died notices only when its statement ends, and holds the run key until then
    const [a, b] = await Promise.all([replica(store.url, 3_000), replica(store.url, 50)]);
    const runKey = 'billing/bill#2026-01-01T01:00:00Z#c0ffee';
    // the old leader (epoch 1) delivers to A; A is killed while the job's write is uncommitted
    const lost = deliver(a, { runKey, epoch: 1 }).catch((err: unknown) => err);
    await until(() => (a.inFn() > 0 ? true : undefined), 30_000, 'A to enter the job');
    a.child.kill('SIGKILL');
    expect(await lost).toBeInstanceOf(Error);
    expect(await store.effects(runKey)).toBe(0);
    // failover: the new leader (epoch 2) and the deposed one (epoch 1) both deliver to B
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => deliver(b, { runKey, epoch: i % 2 === 0 ? 2 : 1 })),
    );
    expect(count(answers, 'executed')).toBe(1);
    expect(count(answers, 'executed') + count(answers, 'duplicate') + count(answers, 'stale')).toBe(
      50,
    );
    for (const x of answers.filter((x) => x.outcome === 'stale')) {
      expect(x.status).toBe(409);
      expect(JSON.parse(x.body)).toMatchObject({ error: { code: 'StaleLeaderEpoch' } });
    }
    expect(await store.effects(runKey)).toBe(1);
    // the next fire: the deposed leader is refused, the new one runs it
    const next = 'billing/bill#2026-01-01T02:00:00Z#c0ffee';
    expect(await deliver(b, { runKey: next, epoch: 1 })).toMatchObject({
      status: 409,
      outcome: 'stale',
    });
    expect(await store.effects(next)).toBe(0);
    expect(await deliver(b, { runKey: next, epoch: 2 })).toMatchObject({
      status: 200,
      outcome: 'executed',
    });
    expect(await store.effects(next)).toBe(1);
    b.child.kill('SIGKILL');
  }, 120_000);

  it('a failing job rolls back and is run again; stale fencing tokens and missing run keys are refused', async () => {
    await setup();
    const r = await replica(store.url, 0);
    const runKey = 'billing/bill#2026-01-01T03:00:00Z#c0ffee';
    const failed = await deliver(r, { runKey, token: 5, fail: true });
    expect(failed).toMatchObject({ status: 500, outcome: 'failed' });
    expect(await store.effects(runKey)).toBe(0);
    expect(await store.row(runKey)).toMatchObject({ state: 'failed' });
    expect((await store.row(runKey))?.['error']).toContain('x-test-fail');
    expect(await deliver(r, { runKey, token: 6 })).toMatchObject({
      status: 200,
      outcome: 'executed',
    });
    expect(await store.effects(runKey)).toBe(1);
    const older = await deliver(r, {
      runKey: 'billing/bill#2026-01-01T04:00:00Z#c0ffee',
      token: 5,
    });
    expect(older).toMatchObject({ status: 409, outcome: 'stale' });
    expect(JSON.parse(older.body)).toMatchObject({ error: { code: 'StaleFencingToken' } });
    expect(await deliver(r, { runKey: '' })).toMatchObject({ status: 400, outcome: 'invalid' });
    r.child.kill('SIGKILL');
  }, 60_000);

  it('a duplicate from a new leader raises the fence: the deposed leader is refused at the next fire', async () => {
    await setup();
    const r = await replica(store.url, 0);
    const runKey = 'billing/bill#2026-01-01T05:00:00Z#c0ffee';
    // the old leader (epoch 1) ran it; the new leader (epoch 2) only ever gets duplicates
    expect(await deliver(r, { runKey, epoch: 1 })).toMatchObject({ outcome: 'executed' });
    expect(await deliver(r, { runKey, epoch: 2 })).toMatchObject({ outcome: 'duplicate' });
    const next = 'billing/bill#2026-01-01T06:00:00Z#c0ffee';
    const refused = await deliver(r, { runKey: next, epoch: 1 });
    expect(refused).toMatchObject({ status: 409, outcome: 'stale' });
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'StaleLeaderEpoch' } });
    expect(await store.effects(next)).toBe(0);
    r.child.kill('SIGKILL');
  }, 60_000);
});
