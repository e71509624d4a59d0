/**
 * Chaos with real processes (SPEC §10, issue 11): three `cronix serve`
 * replicas on a private PostgreSQL cluster, each through its own TCP proxy,
 * every-second schedules with catch-up `all` within a window, a real HTTP sink.
 * One run goes through: SIGKILL of the leader mid-dispatch; SIGSTOP of the
 * leader for twice the lease, then SIGCONT; a cut database connection; SIGTERM;
 * a database restart. Then, from the sink's record, the ledger and the
 * replicas' logs:
 *
 * - every (job, scheduled time) was delivered at most once;
 * - no gaps: every instant has its row — delivered, or crashed, skipped or
 *   missed as its policy says;
 * - epochs strictly increase, and no attempt arrived after the next epoch began
 *   (no deposed leader acted);
 * - failover times within TTL + TTL/3 after a crash and 5 s after a SIGTERM.
 *
 * The measured failover times are printed.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pgQuery, startPrivateCluster, type PrivateCluster } from '../helpers/pg.js';
import { API_TIMEOUT_MS, manifestDir, spawnServe, until, type Served } from '../helpers/serve.js';
import { freePort, startSink, type Sink } from '../helpers/sink.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const LEASE_S = 3;
const LEASE_MS = LEASE_S * 1000;
/** Slack for process scheduling on a loaded 2-core machine, on top of SPEC bounds. */
const SLACK_MS = 1500;

let pg: PrivateCluster;
let sink: Sink;
const proxies: TcpProxy[] = [];
const replicas: (Served | null)[] = [null, null, null];
let dir: string;

beforeAll(async () => {
  pg = await startPrivateCluster();
  sink = await startSink(() => ({ status: 200, delayMs: Math.floor(Math.random() * 300) }));
  for (let i = 0; i < 3; i++) proxies.push(await startTcpProxy(pg.port));
  const catchup = { mode: 'all', window_seconds: 60, max_runs: 100 };
  dir = manifestDir('chaos', [
    {
      name: 'tick',
      schedule: '* * * * * *',
      request: { url: `${sink.url}/tick` },
      policy: { concurrency: 'Forbid', retries: { max_attempts: 1 }, catchup },
    },
    {
      name: 'tock',
      schedule: '*/2 * * * * *',
      request: { url: `${sink.url}/tock` },
      policy: { concurrency: 'Enqueue', retries: { max_attempts: 1 }, catchup },
    },
  ]);
}, 60_000);

afterAll(async () => {
  for (const r of replicas) r?.child.kill('SIGKILL');
  for (const p of proxies) await p.close();
  await sink?.close();
  pg?.destroy();
});

const ports: number[] = [];
async function startReplica(i: number): Promise<Served> {
  ports[i] ??= await freePort();
  const s = await spawnServe(dir, ports[i]!, {
    dataDir: join(dir, `data-${i}`),
    args: [
      '--store',
      `postgres://postgres@127.0.0.1:${proxies[i]!.port}/postgres?schema=chaos`,
      '--replica-id',
      `r${i}`,
      '--lease-seconds',
      String(LEASE_S),
    ],
  });
  replicas[i] = s;
  return s;
}

interface Lead {
  replica: number;
  epoch: number;
  at: number;
}

/** Every "leading at epoch N" line of every replica process ever started, by time. */
const allOutput: string[][] = [[], [], []];
function leads(): Lead[] {
  const out: Lead[] = [];
  replicas.forEach((r, i) => {
    const text = [...allOutput[i]!, r?.output() ?? ''].join('\n');
    for (const line of text.split('\n')) {
      const m = /"time":"([^"]+)".*"msg":"leading at epoch (\d+)"/.exec(line);
      if (m) out.push({ replica: i, epoch: Number(m[2]), at: Date.parse(m[1]!) });
    }
  });
  const seen = new Set<string>();
  return out
    .filter((l) => !seen.has(`${l.replica}:${l.epoch}`) && seen.add(`${l.replica}:${l.epoch}`))
    .sort((a, b) => a.at - b.at);
}

async function leaderNow(): Promise<number> {
  return until(
    async () => {
      for (let i = 0; i < 3; i++) {
        const r = replicas[i];
        if (!r) continue;
        const res = await fetch(`${r.url}/api/v1/cluster`, {
          signal: AbortSignal.timeout(API_TIMEOUT_MS), // a replica killed mid-connect (serve.ts)
          headers: { authorization: `Bearer ${r.token}` },
        }).catch(() => null);
        if (!res?.ok) continue;
        const v = (await res.json()) as { self: { role: string } };
        if (v.self.role === 'leader') return i;
      }
      return undefined;
    },
    20_000,
    'a leader',
  );
}

/** Waits for a lead that began after `since` and returns it. */
async function nextLead(since: number, timeoutMs = 20_000): Promise<Lead> {
  return until(() => leads().find((l) => l.at > since), timeoutMs, 'a new leader');
}

/**
 * The replica that led last: on a loaded machine a renewal can miss its deadline and the lease
 * move on its own between two steps, so each step aims at the leader of that moment.
 */
function latestLead(): Lead {
  const all = leads();
  return all[all.length - 1]!;
}

function retire(i: number): void {
  allOutput[i]!.push(replicas[i]?.output() ?? '');
}

it('three replicas through SIGKILL, SIGSTOP, a cut connection, SIGTERM and a database restart', async () => {
  const failovers: Record<string, number> = {};
  for (let i = 0; i < 3; i++) await startReplica(i);
  const started = Date.now();
  let leader = await leaderNow();
  await new Promise((r) => setTimeout(r, 4000));

  // 1. SIGKILL the leader mid-dispatch
  let t = Date.now();
  replicas[leader]!.child.kill('SIGKILL');
  await replicas[leader]!.exited;
  let lead = await nextLead(t);
  failovers['SIGKILL'] = lead.at - t;
  retire(leader);
  await startReplica(leader);
  await new Promise((r) => setTimeout(r, 3000));
  leader = latestLead().replica;

  // 2. SIGSTOP the leader for twice the lease, then SIGCONT
  t = Date.now();
  const stopped = leader;
  replicas[stopped]!.child.kill('SIGSTOP');
  lead = await nextLead(t);
  failovers['SIGSTOP'] = lead.at - t;
  await new Promise((r) => setTimeout(r, Math.max(0, t + 2 * LEASE_MS - Date.now())));
  replicas[stopped]!.child.kill('SIGCONT');
  // a woken process on a CPU-starved machine may take seconds to run its timers: the bound on
  // acting after its term (below: no request after the next epoch began) is what matters here
  await until(
    () => (/stepped down from epoch/.test(replicas[stopped]!.output()) ? true : undefined),
    30_000,
    `the woken replica r${stopped} to step down`,
  ).catch((err: Error) => {
    throw new Error(
      `${err.message}; its output ends:\n${replicas[stopped]!.output().slice(-4000)}`,
    );
  });
  await new Promise((r) => setTimeout(r, 3000));
  leader = latestLead().replica;

  // 3. cut the leader's database connection
  t = Date.now();
  proxies[leader]!.cut(true);
  lead = await nextLead(t);
  failovers['cut connection'] = lead.at - t;
  await new Promise((r) => setTimeout(r, 2000));
  proxies[leader]!.restore();
  await new Promise((r) => setTimeout(r, 3000));
  leader = latestLead().replica;

  // 4. SIGTERM the leader
  t = Date.now();
  replicas[leader]!.child.kill('SIGTERM');
  lead = await nextLead(t);
  failovers['SIGTERM'] = lead.at - t;
  expect((await replicas[leader]!.exited).code).toBe(0);
  retire(leader);
  await startReplica(leader);
  await new Promise((r) => setTimeout(r, 3000));

  // 5. restart the database
  t = Date.now();
  pg.stop('fast');
  await new Promise((r) => setTimeout(r, 3000));
  pg.start();
  lead = await nextLead(t, 30_000);
  failovers['database restart (3 s down)'] = lead.at - t;
  await new Promise((r) => setTimeout(r, 5000));
  const ended = Date.now();
  for (let i = 0; i < 3; i++) {
    replicas[i]!.child.kill('SIGTERM');
    await replicas[i]!.exited;
  }
  console.log(`failover times (ms): ${JSON.stringify(failovers)}`);

  // failover bounds
  expect(failovers['SIGKILL']).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 3 + SLACK_MS);
  expect(failovers['SIGSTOP']).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 3 + SLACK_MS);
  expect(failovers['cut connection']).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 3 + SLACK_MS);
  expect(failovers['SIGTERM']).toBeLessThanOrEqual(5000);

  // epochs strictly increase over time
  const history = leads();
  for (let i = 1; i < history.length; i++)
    expect(history[i]!.epoch, JSON.stringify(history)).toBeGreaterThan(history[i - 1]!.epoch);

  // no attempt arrived after the next epoch began
  const requests = sink.requests.filter((r) => r.url === '/tick' || r.url === '/tock');
  for (const r of requests) {
    const epoch = Number(r.headers['x-cron-leader-epoch']);
    const next = history.find((l) => l.epoch > epoch);
    if (next)
      expect(
        r.receivedAt,
        `epoch ${epoch} request after epoch ${next.epoch} began`,
      ).toBeLessThanOrEqual(next.at + 300);
  }

  // at most once per (job, scheduled time)
  const runsPerFire = new Map<string, Set<string>>();
  for (const r of requests) {
    const k = `${r.url}@${r.headers['x-cron-fire-time']}`;
    const s = runsPerFire.get(k) ?? new Set<string>();
    s.add(r.headers['x-cron-run-id'] as string);
    runsPerFire.set(k, s);
  }
  for (const [k, s] of runsPerFire) expect(s.size, k).toBe(1);

  // no gaps: every instant of the steady part has exactly one row, and a success was delivered
  const rows = await pgQuery<{ job: string; t: number; outcome: string | null; trigger: string }>(
    `SELECT job, scheduled_time AS t, outcome, "trigger" FROM chaos.runs
     WHERE "trigger" IN ('schedule', 'catchup')`,
    [],
    pg.url,
  );
  const byFire = new Map<string, typeof rows>();
  for (const r of rows) {
    const k = `${r.job}@${Number(r.t)}`;
    byFire.set(k, [...(byFire.get(k) ?? []), r]);
  }
  const delivered = new Set(
    requests.map((r) => `${r.url.slice(1)}@${Number(r.headers['x-cron-fire-time']) * 1000}`),
  );
  const from = Math.ceil((started + 3000) / 1000) * 1000;
  const to = Math.floor((ended - 3000) / 1000) * 1000;
  const outcomes: Record<string, number> = {};
  for (const [job, step] of [
    ['tick', 1000],
    ['tock', 2000],
  ] as const) {
    for (let at = Math.ceil(from / step) * step; at <= to; at += step) {
      const fire = byFire.get(`${job}@${at}`) ?? [];
      expect(fire, `${job} at ${new Date(at).toISOString()}`).toHaveLength(1);
      const row = fire[0]!;
      outcomes[`${row.trigger}:${row.outcome}`] =
        (outcomes[`${row.trigger}:${row.outcome}`] ?? 0) + 1;
      expect(['success', 'crashed', 'skipped', 'missed', 'stopped', 'queue_full']).toContain(
        row.outcome,
      );
      if (row.outcome === 'success') expect(delivered.has(`${job}@${at}`)).toBe(true);
    }
  }
  console.log(
    `chaos ledger: ${JSON.stringify(outcomes)}; ${requests.length} requests; leads ${JSON.stringify(history.map((l) => [l.replica, l.epoch]))}`,
  );
}, 240_000);
