/**
 * Kubernetes: a late pod is credited to its own fire, not the newest one. The CronJob controller
 * names each Job `<cronjob>-<scheduled minute since the epoch>`; the rendered pod exposes the
 * Job name (label `batch.kubernetes.io/job-name`) as `$CRONIX_K8S_JOB_NAME`, and the shim takes
 * the fire time from it when that minute is one of the job's fires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobChangeHash } from '../../src/contract/manifest/index.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';
import { startSink, type Sink } from '../helpers/sink.js';

describe('fire time from the Kubernetes Job name', () => {
  let sink: Sink;
  beforeAll(async () => {
    sink = await startSink();
  });
  afterAll(async () => sink.close());

  const setup = () => {
    const dirs = shimDirs();
    const job = normalizedJob('shop', {
      name: 'sync',
      schedule: '*/5 * * * *',
      request: { url: `${sink.url}/x` },
    });
    writeSpec(dirs.specDir, 'shop', job);
    return { dirs, job };
  };
  // a fire 10 to 15 minutes ago: a pod that started that late
  const lateFire = (): number => Math.floor(Date.now() / 300_000) * 300_000 - 600_000;

  it('a late pod gets the run key of the fire its Job was created for', async () => {
    const { dirs, job } = setup();
    const fire = lateFire();
    const run = await runShim('shop.sync', dirArgs(dirs), {
      CRONIX_K8S_JOB_NAME: `cronix-shop-sync-0-${fire / 60_000}`,
    });
    expect(run.code).toBe(0);
    expect(sink.requests.at(-1)?.headers['x-cron-run-key']).toBe(
      `shop/sync#${new Date(fire).toISOString().replace('.000Z', 'Z')}#${jobChangeHash('shop', job, 0)}`,
    );
    expect(sink.requests.at(-1)?.headers['x-cron-fire-time']).toBe(String(fire / 1000));
  });

  it('a name without a fire of the schedule (a Job made by hand, a future minute) falls back to the latest fire', async () => {
    const { dirs } = setup();
    const latest = Math.floor(Date.now() / 300_000) * 300_000;
    for (const name of [
      'manual-run',
      `cronix-shop-sync-0-${lateFire() / 60_000 + 1}`, // 11 past a fire: not a */5 instant
      `cronix-shop-sync-0-${Math.floor(Date.now() / 60_000) + 60}`, // an hour ahead
    ]) {
      const run = await runShim('shop.sync', dirArgs(dirs), { CRONIX_K8S_JOB_NAME: name });
      expect(run.code).toBe(0);
      const fireTime = Number(sink.requests.at(-1)?.headers['x-cron-fire-time']) * 1000;
      // the latest */5 instant (a boundary may pass while the test runs)
      expect([latest, latest + 300_000]).toContain(fireTime);
    }
  });
});
