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
 * - the old one says it stepped down, and then stands by under the new leader (or, when the
 *   lease moved on meanwhile, leads a later term as a fresh incarnation: an epoch of its own).
 *
 * `CRONIX_TEST_CLI` runs it against another build (it fails on one that lets a
 * process take back its replica's live lease at the same epoch).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from '../helpers/pg.js';
import { API_TIMEOUT_MS, manifestDir, spawnServe, until, type Served } from '../helpers/serve.js';
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
    signal: AbortSignal.timeout(API_TIMEOUT_MS), // a replica killed mid-connect (serve.ts)
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

/**
 * The woken process, after stepping down, stands by under a leader at epoch `second` or later,
 * or leads a later term of its own (a fresh incarnation: an epoch of its own, above `second`).
 */
function afterward(output: string, second: number): boolean {
  const by = [...output.matchAll(/standing by; leader is host-1 at epoch (\d+)/g)];
  const led = [...output.matchAll(/"msg":"leading at epoch (\d+)"/g)];
  return by.some((m) => Number(m[1]) >= second) || led.some((m) => Number(m[1]) > second);
}

/** A process's leadership lines and its last lines, for a failure's message. */
function events(name: string, s: Served): string {
  const lines = s.output().split('\n');
  const picked = lines.filter((l) => /leading at|stepped down|standing by|store .* failed/.test(l));
  return [`--- ${name} (${lines.length} lines) ---`, ...picked.slice(-20), '…', ...lines.slice(-40)]
    .map((l) => l.slice(0, 400))
    .join('\n');
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
  try {
    // liveness waits, not bounds: a woken process on a CPU-starved machine runs its timers late,
    // and the lease may have moved on meanwhile — to a later epoch of the replacement, or to a
    // fresh incarnation of the woken process itself (a term of its own, which it may lead)
    await until(
      () => (old.output().includes(`stepped down from epoch ${first}`) ? true : undefined),
      30_000,
      'the old process to step down',
    );
    await until(
      () => (afterward(old.output(), second) ? true : undefined),
      30_000,
      'the old process to stand by under a later leader, or to lead a later term of its own',
    );
    // a few more fires of the later terms, so the old term had every chance to act
    const seen = ticks().filter((r) => epochOf(r) >= second).length;
    await until(
      () => (ticks().filter((r) => epochOf(r) >= second).length >= seen + 3 ? true : undefined),
      30_000,
      'three more fires of the later terms',
    );
    // one leads and the other stands by (polled: the lease may be passing at this instant)
    await until(
      async () => {
        const roles = [(await view(old))?.role, (await view(replacement))?.role].sort();
        return roles[0] === 'leader' && roles[1] === 'standby' ? true : undefined;
      },
      30_000,
      'one leader and one standby',
    );
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\n${events('old', old)}\n${events('new', replacement)}`,
    );
  }

  const late = ticks().filter((r) => epochOf(r) <= first && r.receivedAt >= newTermAt);
  expect(late, 'requests of the old epoch after the new term began').toEqual([]);
  expect(await rowsOf(first)).toEqual(frozenRows);
  expect(ticks().some((r) => epochOf(r) === first)).toBe(true);
}, 180_000);
