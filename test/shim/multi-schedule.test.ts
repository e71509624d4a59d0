import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobChangeHash } from '../../src/contract/manifest/index.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';
import { startSink, type Sink } from '../helpers/sink.js';

describe('a job with several schedules shares one spec file', () => {
  let sink: Sink;
  beforeAll(async () => {
    sink = await startSink();
  });
  afterAll(async () => sink.close());

  it('takes the fire time and the schedule index from the schedule that fired', async () => {
    const dirs = shimDirs();
    const job = normalizedJob('multi', {
      name: 'sync',
      schedules: ['0 0 1 1 *', '* * * * *'],
      request: { url: `${sink.url}/x` },
    });
    writeSpec(dirs.specDir, 'multi', job);
    const run = await runShim('multi.sync', dirArgs(dirs));
    expect(run.code).toBe(0);
    const key = String(sink.requests.at(-1)?.headers['x-cron-run-key']);
    // schedule 1 (every minute) fired, not schedule 0 (once a year): its instant and its hash
    const m = /^multi\/sync#(.+)#([0-9a-f]{16})$/.exec(key);
    expect(m?.[2]).toBe(jobChangeHash('multi', job, 1));
    expect(Date.now() - Date.parse(m?.[1] ?? '')).toBeLessThan(62_000);
  });

  it('with --fire-time, picks the schedule firing at that instant', async () => {
    const dirs = shimDirs();
    const job = normalizedJob('multi', {
      name: 'sync',
      schedules: ['0 12 * * *', '30 * * * *'],
      request: { url: `${sink.url}/x` },
    });
    writeSpec(dirs.specDir, 'multi', job);
    await runShim('multi.sync', [...dirArgs(dirs), '--fire-time', '2026-03-01T12:00:00Z']);
    expect(sink.requests.at(-1)?.headers['x-cron-run-key']).toBe(
      `multi/sync#2026-03-01T12:00:00Z#${jobChangeHash('multi', job, 0)}`,
    );
    await runShim('multi.sync', [...dirArgs(dirs), '--fire-time', '2026-03-01T12:30:00Z']);
    expect(sink.requests.at(-1)?.headers['x-cron-run-key']).toBe(
      `multi/sync#2026-03-01T12:30:00Z#${jobChangeHash('multi', job, 1)}`,
    );
  });
});
