/**
 * Host mode with high availability (SPEC §15, §10): two real `cronix serve --watch` replicas on
 * one PostgreSQL schema. Reports go to either replica (any accepts them) in a steady stream and a
 * burst; the leader is SIGKILLed in the middle. Afterwards, from the ledger:
 *
 * - nothing lost: every report a replica answered 200 is a row;
 * - no instant has two rows (no doubled `missed`, no `missed` beside its run): the one fire
 *   claim of each instant, whichever leader detected it;
 * - every instant that was not reported, before and after the failover, is `missed` once.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir, until } from '../helpers/common.js';
import { dropSchema, pgQuery, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import { REPORT_SECRET, sendReport } from '../helpers/reports.js';
import { leaderOf, servedRole, spawnServe, type Served } from '../helpers/serve.js';
import { report } from './report-fixtures.js';

const schema = schemaName('watchha');
let dir: string;
const replicas: Served[] = [];

const watched = {
  version: 1,
  app: 'fleet',
  jobs: [
    {
      name: 'tick',
      schedule: '* * * * * *',
      command: { argv: ['/bin/true'] },
      policy: { timeout_seconds: 5, retries: { max_attempts: 1 }, watch: { grace_seconds: 10 } },
    },
    {
      name: 'yearly',
      schedule: '0 0 1 1 *',
      command: { argv: ['/bin/true'] },
    },
  ],
};

function start(i: number): Promise<Served> {
  return spawnServe(dir, 0, {
    manifests: [],
    dataDir: join(dir, `data-${i}`),
    env: { PATH: process.env['PATH'], REPORT_SECRET },
    args: [
      '--watch',
      join(dir, 'watch.json'),
      '--report-secret-ref',
      'env:REPORT_SECRET',
      '--store',
      withSchema(PG_URL, schema),
      '--replica-id',
      `r${i}`,
      '--lease-seconds',
      '3',
    ],
  });
}

beforeAll(async () => {
  dir = tempDir('watch-ha');
  writeFileSync(join(dir, 'watch.json'), JSON.stringify(watched));
  replicas.push(await start(0));
  replicas.push(await start(1));
}, 60_000);

afterAll(async () => {
  for (const r of replicas) r.child.kill('SIGKILL');
  await Promise.all(replicas.map((r) => r.exited));
  await dropSchema(schema);
});

it('leader SIGKILLed during a burst of reports: nothing lost, no instant with two rows, every unreported instant missed once', async () => {
  const leader = await leaderOf(replicas, 20_000);
  const standby = replicas.find((r) => r !== leader) as Served;
  const accepted = new Set<string>();
  const sent = new Set<string>();
  const refusals: string[] = [];
  /** Sends to a live replica (the other one when the first cannot answer), like a retrying host. */
  const send = async (r: ReturnType<typeof report>, first: Served): Promise<void> => {
    sent.add(`${r.kind}:${r.run.id}`);
    for (const target of [first, standby, first, standby]) {
      try {
        const res = await sendReport(target.url, r);
        if (res.status === 200) {
          accepted.add(`${r.kind}:${r.run.id}`);
          return;
        }
        refusals.push(`${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
      } catch (err) {
        // that replica is gone: the next one
        refusals.push(String((err as Error).message));
      }
      await new Promise((res) => setTimeout(res, 200));
    }
  };
  // reported: instants whose second is not a multiple of 3; the others are left to detection
  const streamFrom = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  const streamTo = streamFrom + 16_000;
  let killedAt = 0;
  const stream = (async () => {
    for (let t = streamFrom; t < streamTo; t += 1000) {
      while (Date.now() < t + 100) await new Promise((r) => setTimeout(r, 20));
      if (t === streamFrom + 4000) {
        leader.child.kill('SIGKILL');
        killedAt = Date.now();
      }
      if ((t / 1000) % 3 === 0) continue;
      const started = report('started', t, { app: 'fleet', job: 'tick', host: 'h1' });
      await send(started, replicas[(t / 1000) % 2]!);
      await send(
        report('ended', t, { ...started.run, endedAt: t + 300, outcome: 'success', exitCode: 0 }),
        replicas[(t / 1000 + 1) % 2]!,
      );
    }
  })();
  // the burst: 600 reports of the yearly job's recent instants (within the retention), to both
  // replicas, across the kill
  const burstFrom = Date.now() - 3_600_000;
  const burst = (async () => {
    await new Promise((r) => setTimeout(r, 3500));
    const all = Array.from({ length: 600 }, (_, i) =>
      report('ended', burstFrom + i * 1000, {
        id: randomUUID(),
        app: 'fleet',
        job: 'yearly',
        runKey: `fleet/yearly#${new Date(burstFrom + i * 1000).toISOString()}#abc`,
      }),
    );
    for (let i = 0; i < all.length; i += 20)
      await Promise.all(all.slice(i, i + 20).map((r, k) => send(r, replicas[k % 2]!)));
  })();
  await Promise.all([stream, burst]);
  expect(killedAt).toBeGreaterThan(0);
  expect(await servedRole(standby)).toBe('leader');
  // detection catches up through the last instant (grace 10 s)
  const ids = [...new Set([...accepted].map((k) => k.split(':')[1] as string))];
  const rowsOf = async () =>
    pgQuery<{ id: string; scheduled_time: string; outcome: string | null; error: string | null }>(
      `SELECT id, scheduled_time, outcome, error FROM ${schema}.runs WHERE app = 'fleet' AND job = 'tick'
       AND scheduled_time >= $1 AND scheduled_time < $2`,
      [streamFrom, streamTo],
    );
  await until(
    async () => {
      const rows = await rowsOf();
      const times = new Set(rows.map((r) => Number(r.scheduled_time)));
      return times.size === 16 ? true : undefined;
    },
    40_000,
    'a row for every instant of the stream',
  );
  // nothing lost
  const found = await pgQuery<{ id: string }>(
    `SELECT id FROM ${schema}.runs WHERE id = ANY($1::text[])`,
    [ids],
  );
  expect(found.length).toBe(ids.length);
  expect([...accepted].sort(), refusals.slice(0, 5).join('\n')).toEqual([...sent].sort());
  // one row per instant: the run, or one missed row
  const rows = await rowsOf();
  const per = new Map<number, typeof rows>();
  for (const r of rows)
    per.set(Number(r.scheduled_time), [...(per.get(Number(r.scheduled_time)) ?? []), r]);
  for (const [t, list] of per) {
    expect([t, list.length]).toEqual([t, 1]);
    const row = list[0]!;
    if ((t / 1000) % 3 === 0)
      expect([t, row.outcome, row.error]).toEqual([
        t,
        'missed',
        'no report from any host within 10 s',
      ]);
    else expect([t, row.outcome]).toEqual([t, 'success']);
  }
  // the yearly burst: all 600 recorded once
  const yearly = await pgQuery<{ n: string }>(
    `SELECT count(*) AS n FROM ${schema}.runs WHERE app = 'fleet' AND job = 'yearly'`,
  );
  expect(Number(yearly[0]!.n)).toBe(600);
}, 120_000);
