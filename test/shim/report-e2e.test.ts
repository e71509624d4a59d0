/**
 * Reports end to end with real processes (SPEC §15): real `cronix trigger` shims, started the
 * way a host scheduler starts them, report to a real `cronix serve --watch`.
 *
 * - a shim SIGKILLed mid-run leaves a start with no end: the server records `crashed`
 *   (`no end report`) within the job's worst case plus its grace;
 * - two hosts (two state dirs) race one global-scope job (Redis lock): one run, one `skipped`,
 *   both reported with their host;
 * - the server is down across several fires of an every-2-s job: the shims exit as always, and
 *   once it is back every fire is in the ledger exactly once, none `missed`, run keys unique,
 *   in the order they fired.
 *
 * The cron daemon's side (cron fires the shim, missed/recovered when cron stops and starts) is
 * in test/reconcile/cron-report-e2e.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, SHARED_REDIS_URL, tempDir, until } from '../helpers/common.js';
import { REPORT_SECRET } from '../helpers/reports.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { startSink } from '../helpers/sink.js';
import {
  dirArgs,
  normalizedJob,
  runShim,
  shimDirs,
  startShim,
  writeSpec,
  type ShimDirs,
} from '../helpers/shim.js';

type Run = Record<string, unknown>;
const grace = { watch: { grace_seconds: 10 } };
const JOBS = [
  {
    name: 'tick',
    schedule: '*/2 * * * * *',
    command: { argv: ['/bin/true'] },
    policy: { timeout_seconds: 5, retries: { max_attempts: 1 }, ...grace },
  },
  {
    name: 'slow',
    schedule: '0 0 1 1 *',
    command: { argv: ['/bin/sleep', '30'], graceful_stop_seconds: 1 },
    policy: { timeout_seconds: 3, retries: { max_attempts: 1 }, ...grace },
  },
  {
    name: 'race',
    schedule: '0 0 1 1 *',
    command: { argv: ['/bin/sleep', '2'] },
    policy: {
      concurrency_scope: 'global',
      timeout_seconds: 10,
      retries: { max_attempts: 1 },
      ...grace,
    },
  },
];

let dir: string;
let port: number;
let served: Served;
let host: ShimDirs;

async function serve(): Promise<Served> {
  return spawnServe(dir, port, {
    manifests: [],
    args: ['--watch', join(dir, 'watch.json'), '--report-secret-ref', 'env:REPORT_SECRET'],
    env: { PATH: process.env['PATH'], REPORT_SECRET },
  });
}

/** Spec files of every job on a "host" (what `cronix apply --report-to` writes). */
function hostDirs(): ShimDirs {
  const d = shimDirs('cronix-report-e2e-');
  for (const raw of JOBS) {
    writeSpec(d.specDir, 'shop', normalizedJob('shop', raw), {
      report_to: `http://127.0.0.1:${port}`,
      report_secret_refs: ['env:REPORT_SECRET'],
    });
  }
  return d;
}

const shimEnv = (name: string, extra: Record<string, string> = {}) => ({
  REPORT_SECRET,
  CRONIX_HOST_ID: name,
  ...extra,
});

const runsOf = async (job: string): Promise<Run[]> =>
  (await api(served, 'GET', `/api/v1/runs?app=shop&job=${job}&limit=1000`)).json['runs'] as Run[];

beforeAll(async () => {
  dir = tempDir('report-e2e');
  port = await freePort();
  writeFileSync(join(dir, 'watch.json'), JSON.stringify({ version: 1, app: 'shop', jobs: JOBS }));
  served = await serve();
  host = hostDirs();
}, 30_000);
afterAll(async () => {
  served?.child.kill('SIGKILL');
  await served?.exited;
});

describe('shim reports to a real serve --watch', () => {
  it('SIGKILL of the shim mid-run: the run ends crashed (no end report) within its bound', async () => {
    const shim = startShim(
      'shop.slow',
      [...dirArgs(host), '--fire-time', '2026-01-01T00:00:00Z'],
      shimEnv('web-1'),
    );
    const running = await until(
      async () => (await runsOf('slow')).find((r) => r['phase'] === 'running'),
      15_000,
      'the started report',
    );
    expect(running).toMatchObject({ trigger: 'host', host: 'web-1' });
    const pid = /"pid":(\d+)/.exec(shim.stdout())?.[1];
    shim.child.kill('SIGKILL');
    if (pid !== undefined) process.kill(-Number(pid), 'SIGKILL'); // its command's process group
    const crashed = await until(
      async () => {
        const r = (await api(served, 'GET', `/api/v1/runs/${running['id'] as string}`)).json;
        return r['outcome'] === 'crashed' ? r : undefined;
      },
      45_000,
      'the crashed run',
    );
    expect(crashed).toMatchObject({ error: 'no end report', host: 'web-1', phase: 'ended' });
    // the worst case (3 s timeout + 1 s stop) plus the 10 s grace, plus 5 s for the detector
    const after = Date.now() - Date.parse(running['started_at'] as string);
    console.log(`report e2e: crashed recorded ${(after / 1000).toFixed(1)} s after the start`);
    expect(after).toBeLessThan(4_000 + 10_000 + 5_000);
  }, 60_000);

  it('two hosts race one global-scope job: one run, one skipped, both reported', async () => {
    const other = hostDirs();
    const redis = { CRONIX_REDIS_URL: SHARED_REDIS_URL, CRONIX_REDIS_PREFIX: `e2e${port}:` };
    const fire = ['--fire-time', '2026-01-01T00:00:00Z'];
    const [a, b] = await Promise.all([
      runShim('shop.race', [...dirArgs(host), ...fire], shimEnv('host-a', redis)),
      runShim('shop.race', [...dirArgs(other), ...fire], shimEnv('host-b', redis)),
    ]);
    expect([a.code, b.code].sort()).toEqual([0, 4]);
    const rows = await until(
      async () => {
        const r = (await runsOf('race')).filter((x) => x['phase'] === 'ended');
        return r.length === 2 ? r : undefined;
      },
      15_000,
      'both reports',
    );
    const byOutcome = Object.fromEntries(rows.map((r) => [r['outcome'] as string, r]));
    expect(Object.keys(byOutcome).sort()).toEqual(['skipped', 'success']);
    const winner = a.code === 0 ? 'host-a' : 'host-b';
    expect(byOutcome['success']).toMatchObject({ host: winner, exit_code: 0 });
    expect(byOutcome['skipped']).toMatchObject({
      host: winner === 'host-a' ? 'host-b' : 'host-a',
      exit_code: 4,
    });
    expect(byOutcome['success']!['run_key']).toBe(byOutcome['skipped']!['run_key']);
    expect(byOutcome['success']!['id']).not.toBe(byOutcome['skipped']!['id']);
  }, 60_000);

  it('the exit code and timing never depend on the server: down, 500, never answering', async () => {
    const sink = await startSink();
    const gone = await freePort();
    try {
      const d = shimDirs('cronix-report-exit-');
      // no report keys in the spec: CRONIX_REPORT_URL and CRONIX_REPORT_SECRET provide them
      writeSpec(
        d.specDir,
        'shop',
        normalizedJob('shop', {
          name: 'fails',
          schedule: '0 0 1 1 *',
          command: { argv: ['/bin/sh', '-c', 'exit 7'] },
          policy: { concurrency: 'Allow', timeout_seconds: 5, retries: { max_attempts: 1 } },
        }),
      );
      const fire = async (url: string): Promise<{ code: number | null; ms: number }> => {
        const t0 = performance.now();
        const r = await runShim(
          'shop.fails',
          [...dirArgs(d), '--fire-time', '2026-01-01T00:00:00Z'],
          {
            CRONIX_REPORT_URL: url,
            CRONIX_REPORT_SECRET: REPORT_SECRET,
          },
        );
        return { code: r.code, ms: performance.now() - t0 };
      };
      sink.setScript(() => ({ status: 200 }));
      const ok = await fire(sink.url);
      const down = await fire(`http://127.0.0.1:${gone}`);
      sink.setScript(() => ({ status: 500 }));
      const failing = await fire(sink.url);
      sink.setScript(() => ({ hang: true }));
      const hanging = await fire(sink.url);
      console.log(
        `report e2e: exit 2 in ${[ok, down, failing, hanging].map((f) => Math.round(f.ms)).join(' / ')} ms (server up / down / 500 / never answering)`,
      );
      expect([ok.code, down.code, failing.code, hanging.code]).toEqual([2, 2, 2, 2]);
      // never answering costs at most the 2 s budget more than a server that answers
      expect(hanging.ms - ok.ms).toBeLessThan(2_000 + 1_500);
      expect(sink.requests.length).toBeGreaterThanOrEqual(2);
    } finally {
      await sink.close();
    }
  }, 60_000);

  it('server down across several fires: once back, every fire is in the ledger once, none missed, in order', async () => {
    // fire every instant of */2 s from now on, as the host scheduler would
    const fired: string[] = [];
    const codes: number[] = [];
    let stop = false;
    const driver = (async () => {
      let next = Math.ceil((Date.now() + 500) / 2000) * 2000;
      while (!stop) {
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
        const at = new Date(next).toISOString().replace('.000Z', 'Z');
        fired.push(at);
        void runShim('shop.tick', [...dirArgs(host), '--fire-time', at], shimEnv('web-1')).then(
          (r) => codes.push(r.code ?? -1),
        );
        next += 2000;
      }
    })();
    await until(async () => (fired.length >= 2 ? true : undefined), 10_000, 'two fires');
    served.child.kill('SIGTERM');
    await served.exited;
    const downFrom = fired.length;
    await until(async () => (fired.length >= downFrom + 4 ? true : undefined), 20_000, 'fires');
    served = await serve();
    await until(async () => (fired.length >= downFrom + 6 ? true : undefined), 20_000, 'fires');
    stop = true;
    await driver;
    const window = new Set(fired);
    const rows = await until(
      async () => {
        const r = (await runsOf('tick')).filter((x) =>
          window.has((x['scheduled_time'] as string).replace('.000Z', 'Z')),
        );
        return r.length >= fired.length && r.every((x) => x['phase'] === 'ended') ? r : undefined;
      },
      20_000,
      'every fire in the ledger',
    );
    console.log(
      `report e2e: ${fired.length} fires, ${fired.length - downFrom - 2} of them with the server down`,
    );
    expect(codes.every((c) => c === 0)).toBe(true);
    expect(rows.map((r) => r['outcome'])).toEqual(rows.map(() => 'success'));
    const keys = rows.map((r) => r['run_key'] as string);
    expect(new Set(keys).size).toBe(fired.length);
    expect(rows).toHaveLength(fired.length);
    // order kept: arrival (created_at) follows the fire order
    const byFire = [...rows].sort((x, y) =>
      (x['scheduled_time'] as string) < (y['scheduled_time'] as string) ? -1 : 1,
    );
    const created = byFire.map((r) => Date.parse(r['created_at'] as string));
    expect(created).toEqual([...created].sort((x, y) => x - y));
  }, 90_000);
});
