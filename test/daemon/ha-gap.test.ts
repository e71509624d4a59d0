/**
 * Fires during a failover are missed for the right reason (issue "The first hour", item 14): two
 * real `cronix serve` replicas on one PostgreSQL schema, an every-second job with catch-up
 * `none`. The leader is SIGKILLed; until its lease runs out no one leads. The new leader records
 * the fires of that span `missed` saying "no leader between T1 and T2" — not "the daemon was
 * down", since the other replica was up all along — and T1..T2 covers the fires it names.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dropSchema, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import {
  api,
  leaderOf,
  manifestDir,
  servedRole,
  spawnServe,
  until,
  type Served,
} from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schema = schemaName('hagap');
let sink: Sink;
let dir: string;
const replicas: Served[] = [];

function start(i: number): Promise<Served> {
  return spawnServe(dir, 0, {
    dataDir: join(dir, `data-${i}`),
    args: ['--store', withSchema(PG_URL, schema), '--replica-id', `r${i}`, '--lease-seconds', '3'],
  });
}

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
  dir = manifestDir('hagap', [
    {
      name: 'tick',
      schedule: '* * * * * *',
      request: { url: `${sink.url}/tick` },
      policy: { retries: { max_attempts: 1 }, catchup: { mode: 'none' } },
    },
  ]);
  replicas.push(await start(0), await start(1));
}, 60_000);

afterAll(async () => {
  for (const s of replicas) s.child.kill('SIGKILL');
  await sink?.close();
  await dropSchema(schema);
});

it('a leader SIGKILLed: the fires until the new leader took over are missed as "no leader between T1 and T2"', async () => {
  const leader = await leaderOf(replicas);
  const other = replicas.find((s) => s !== leader)!;
  await until(() => (sink.requests.length >= 2 ? true : undefined), 30_000, 'fires');
  leader.child.kill('SIGKILL');
  await leader.exited;
  await until(
    async () => ((await servedRole(other)) === 'leader' ? true : undefined),
    30_000,
    'B leads',
  );
  const missed = await until(
    async () => {
      const r = await api(other, 'GET', '/api/v1/runs?outcome=missed&limit=100');
      const runs = (r.json['runs'] ?? []) as { error?: string; scheduled_at?: string }[];
      return runs.length > 0 ? runs : undefined;
    },
    30_000,
    'missed rows',
  );
  for (const run of missed) {
    const m = /^missed: no leader between (\S+) and (\S+) \(catchup\.mode none\)$/.exec(
      run.error ?? '',
    );
    expect(m, run.error).not.toBeNull();
    expect(run.error).not.toContain('the daemon was down');
    const [from, to] = [Date.parse(m![1]!), Date.parse(m![2]!)];
    expect(from).toBeLessThan(to);
    // the span is the lease running out after the kill: at most a few lease lengths
    expect(to - from).toBeLessThan(30_000);
  }
}, 120_000);
