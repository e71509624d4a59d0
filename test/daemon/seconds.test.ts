/**
 * Seconds schedules in a real `cronix serve` (SPEC §3 extension, issue 9): a
 * `*\/2 * * * * *` job fires every 2 s for a minute with the right intended
 * fire times — every even second once, in order, each request within a second
 * of its time — and the ledger holds one row per fire.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, manifestDir, spawnServe, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let served: Served | undefined;
beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  served?.child.kill('SIGKILL');
  await sink.close();
});

it('*/2 * * * * * fires every 2 s for a minute at its intended times', async () => {
  const dir = manifestDir('secs', [
    {
      name: 'every2',
      schedule: '*/2 * * * * *',
      request: { url: `${sink.url}/every2` },
      policy: { concurrency: 'Forbid', retries: { max_attempts: 1 } },
    },
  ]);
  served = await spawnServe(dir);
  const from = Date.now();
  await new Promise((r) => setTimeout(r, 61_000));
  const to = Date.now();
  const reqs = sink.requests.filter((r) => r.url === '/every2');
  const fireTimes = reqs.map((r) => Number(r.headers['x-cron-fire-time']));
  // every even second between the first and the last, once, in order
  expect(fireTimes.length).toBeGreaterThanOrEqual(29);
  for (let i = 1; i < fireTimes.length; i++) expect(fireTimes[i]! - fireTimes[i - 1]!).toBe(2);
  for (const t of fireTimes) expect(t % 2).toBe(0);
  expect(fireTimes[0]! * 1000).toBeGreaterThanOrEqual(from - 2000);
  expect(fireTimes.at(-1)! * 1000).toBeLessThanOrEqual(to);
  for (const r of reqs) {
    const lag = r.receivedAt - Number(r.headers['x-cron-fire-time']) * 1000;
    expect(lag).toBeGreaterThanOrEqual(0); // never early
    expect(lag).toBeLessThan(1000);
  }
  // the run keys carry the second, and the ledger has one success per fire
  expect(reqs[0]!.headers['x-cron-run-key']).toMatch(
    /^secs\/every2#\d{4}-\d\d-\d\dT\d\d:\d\d:\d[02468]Z#/,
  );
  const runs = (await api(served, 'GET', '/api/v1/runs?job=every2&app=secs&limit=1000')).json[
    'runs'
  ] as { scheduled_time: string; outcome: string }[];
  const ok = runs
    .filter((r) => r.outcome === 'success')
    .map((r) => Date.parse(r.scheduled_time) / 1000);
  expect(new Set(ok).size).toBe(ok.length);
  for (const t of fireTimes) expect(ok).toContain(t);
}, 90_000);
