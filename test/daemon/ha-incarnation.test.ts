/**
 * Epochs fence incarnations, with real processes (SPEC §10, finding 16): the
 * documented systemd setup gives a restarted daemon the same `--replica-id`
 * (`%H`). A leader is frozen (SIGSTOP, like a paused VM), its replacement starts
 * under the same replica id, waits for the frozen one's lease to run out and
 * leads under a new epoch; the old one is woken (SIGCONT). Then:
 *
 * - the replacement's epoch is greater than the old one's;
 * - none of the old one's HTTP requests reached the app after the new term
 *   began (the sink counts requests by `X-Cron-Leader-Epoch`);
 * - none of its ledger writes was accepted after the new term began: the rows
 *   stamped with the old epoch (`runs.leader_epoch`) are the ones there were
 *   while it was frozen, unchanged;
 * - the old one says it stepped down, and stands by under the new leader.
 *
 * `CRONIX_TEST_CLI` runs it against another build (it fails on one that lets a
 * process take back its replica's live lease at the same epoch).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from '../helpers/pg.js';
import { manifestDir, spawnServe, until, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schema = schemaName('incarnation');
let sink: Sink;
let dir: string;
const served: Served[] = [];

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
  dir = manifestDir('inc', [
    {
      name: 'tick',
      schedule: '* * * * * *',
      request: { url: `${sink.url}/tick` },
      policy: { concurrency: 'Allow', retries: { max_attempts: 1 }, catchup: { mode: 'none' } },
    },
  ]);
});
afterAll(async () => {
  for (const s of served) {
    s.child.kill('SIGCONT');
    s.child.kill('SIGKILL');
  }
  await sink.close();
  await dropSchema(schema);
});

async function replica(name: string): Promise<Served> {
  const s = await spawnServe(dir, 0, {
    dataDir: join(dir, name),
    args: ['--store', withSchema(PG_URL, schema), '--replica-id', 'host-1', '--lease-seconds', '3'],
  });
  served.push(s);
  return s;
}

/** The replica's view of the cluster. */
async function view(s: Served): Promise<{ role: string; epoch: number | null } | undefined> {
  const res = await fetch(`${s.url}/api/v1/cluster`, {
    headers: { authorization: `Bearer ${s.token}` },
  }).catch(() => null);
  if (!res?.ok) return undefined;
  const v = (await res.json()) as { self: { role: string }; leader: { epoch: number } | null };
  return { role: v.self.role, epoch: v.leader?.epoch ?? null };
}

const epochOf = (r: Sink['requests'][number]): number => Number(r.headers['x-cron-leader-epoch']);
const ticks = (): Sink['requests'] => sink.requests.filter((r) => r.url === '/tick');

/** When the process logged that it leads at `epoch` (its clock: this machine's). */
function ledAt(s: Served, epoch: number): number | undefined {
  for (const line of s.output().split('\n')) {
    const m = /"time":"([^"]+)".*"msg":"leading at epoch (\d+)"/.exec(line);
    if (m && Number(m[2]) === epoch) return Date.parse(m[1]!);
  }
  return undefined;
}

type Row = { id: string; phase: string; outcome: string | null; attempts: number };
const rowsOf = (epoch: number): Promise<Row[]> =>
  pgQuery<Row>(
    `SELECT id, phase, outcome, attempts FROM ${schema}.runs WHERE leader_epoch = $1 ORDER BY id`,
    [epoch],
  );

it('a frozen leader woken after its replacement (same replica id) led acts on nothing', async () => {
  const old = await replica('old');
  const first = await until(async () => {
    const v = await view(old);
    return v?.role === 'leader' ? v.epoch! : undefined;
  }, 20_000);
  // it dispatches under its epoch
  await until(() => (ticks().some((r) => epochOf(r) === first) ? true : undefined), 10_000);

  old.child.kill('SIGSTOP');
  const replacement = await replica('new');
  const second = await until(
    async () => {
      const v = await view(replacement);
      return v?.role === 'leader' ? v.epoch! : undefined;
    },
    20_000,
    'the replacement to lead',
  );
  expect(second).toBeGreaterThan(first);
  const newTermAt = await until(() => ledAt(replacement, second));
  // the new term dispatches; the old one's rows are what they were when it froze
  await until(() => (ticks().some((r) => epochOf(r) === second) ? true : undefined), 10_000);
  const frozenRows = await rowsOf(first);

  old.child.kill('SIGCONT');
  // liveness waits, not bounds: a woken process on a CPU-starved machine runs its timers late,
  // and the lease may have moved on again (a later epoch of the same replica id) meanwhile
  await until(
    () => (old.output().includes(`stepped down from epoch ${first}`) ? true : undefined),
    30_000,
    'the old process to step down',
  );
  await until(
    () => {
      const told = [...old.output().matchAll(/standing by; leader is host-1 at epoch (\d+)/g)];
      return told.some((m) => Number(m[1]) >= second) ? true : undefined;
    },
    30_000,
    'the old process to stand by',
  );
  // a few more of the new leader's fires, so the old one had every chance to act
  const seen = ticks().filter((r) => epochOf(r) === second).length;
  await until(() =>
    ticks().filter((r) => epochOf(r) === second).length >= seen + 3 ? true : undefined,
  );

  const late = ticks().filter((r) => epochOf(r) <= first && r.receivedAt >= newTermAt);
  expect(late, 'requests of the old epoch after the new term began').toEqual([]);
  expect(await rowsOf(first)).toEqual(frozenRows);
  expect(ticks().some((r) => epochOf(r) === first)).toBe(true);
  expect((await view(old))?.role).toBe('standby');
  expect((await view(replacement))?.role).toBe('leader');
}, 90_000);
