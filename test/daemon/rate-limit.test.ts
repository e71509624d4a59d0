/**
 * `policy.rate` (SPEC §16) with a real daemon, real HTTP and the real clock: 5 jobs share the key
 * `sink` at 40 attempts per second; 200 backfill runs (40 per job, each backfill 40 at once) and a
 * burst of manual triggers go through it. Measured at the sink: no one-second window holds more
 * than 40 requests, all 200 + 10 arrive once each, and the runs that waited said so.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DaemonEmitter } from '../../src/daemon/events.js';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { until } from '../helpers/common.js';
import { startSink, type Sink } from '../helpers/sink.js';

const RATE = 40;
const JOBS = ['j1', 'j2', 'j3', 'j4', 'j5'];
let sink: Sink;
let daemon: DaemonHandle;
const infos: string[] = [];

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
  const dir = mkdtempSync(join(tmpdir(), 'cronix-rate-'));
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({
      version: 1,
      app: 'rl',
      jobs: JOBS.map((name) => ({
        name,
        schedule: '* * * * *',
        request: { url: `${sink.url}/${name}` },
        policy: {
          concurrency: 'Allow',
          retries: { max_attempts: 1 },
          rate: { key: 'sink', per_second: RATE },
        },
        auth: { secret_refs: ['env:RL_SECRET'] },
      })),
    }),
  );
  let events: DaemonEmitter | undefined;
  daemon = await startDaemon({
    manifests: [join(dir, 'm.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { RL_SECRET: 'rate-test-secret-0123456789' },
    onEvents: (e) => (events = e),
  });
  events?.on('info', (i) => infos.push(i.msg));
});
afterAll(async () => {
  await daemon.stop(2000);
  await sink.close();
});

async function api(path: string, body?: unknown): Promise<number> {
  const res = await fetch(`${daemon.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}

it('200 runs across 5 jobs sharing a key: at most 40 requests in any second at the sink', async () => {
  const to = Date.UTC(2026, 0, 10);
  for (const job of JOBS)
    expect(
      await api(`/jobs/rl/${job}/backfills`, {
        from: new Date(to - 40 * 60_000).toISOString(),
        to: new Date(to).toISOString(),
        parallel: 40,
      }),
    ).toBe(202);
  // manual triggers go through the same budget
  for (let i = 0; i < 10; i++) expect(await api(`/jobs/rl/${JOBS[i % 5]}/trigger`)).toBe(202);
  // a run held back says so in the API, and no other run does
  const runs = async () =>
    (
      (await (
        await fetch(`${daemon.url}/api/v1/runs?app=rl&limit=500`, {
          headers: { authorization: `Bearer ${daemon.token}` },
        })
      ).json()) as { runs: { id: string; phase: string; waiting_for: string | null }[] }
    ).runs;
  const waiting = await until(
    async () => (await runs()).find((r) => r.waiting_for !== null),
    10_000,
    'a run waiting for the rate limit',
  );
  expect(waiting.waiting_for).toBe('rate limit sink (40/s)');
  expect(waiting.phase).not.toBe('ended');
  // the backfills' and the manual runs' keys (a minute boundary during the test adds scheduled
  // fires of "* * * * *", which go through the same budget but are not counted here)
  const ours = () =>
    sink.requests
      .map((r) => String(r.headers['x-cron-run-key']))
      .filter((k) => k.endsWith('#manual') || Date.parse(k.split('#')[1] ?? '') <= to);
  await until(() => (ours().length >= 210 ? true : undefined), 30_000, '210 requests');
  const times = sink.requests.map((r) => r.receivedAtPerf).sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while ((times[i] as number) - (times[j] as number) >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  if (process.env['CRONIX_TEST_VERBOSE'])
    console.log(`peak ${peak} in 1 s, span ${(times.at(-1) as number) - (times[0] as number)} ms`);
  expect(peak).toBeLessThanOrEqual(RATE);
  expect(peak).toBeGreaterThan(RATE / 2); // the limit was reached, not merely respected
  const keys = ours();
  expect(keys).toHaveLength(210);
  expect(new Set(keys).size).toBe(210);
  const spanMs = (times.at(-1) as number) - (times[0] as number);
  expect(spanMs).toBeGreaterThanOrEqual(((210 - RATE) / RATE) * 1000 - 50);
  expect(infos.some((m) => /waiting for rate limit \(sink, 40\/s\)/.test(m))).toBe(true);
}, 60_000);
