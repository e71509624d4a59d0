/**
 * The real `cronix trigger` with schedules of the seconds extension (SPEC §3): the intended
 * fire time is the latest fire at or before the start (SPEC §5.4) to the second, so a job
 * firing every second is not credited to the next fire, and run keys carry the seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobChangeHash } from '../../src/contract/manifest/index.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';
import { startSink, type Sink } from '../helpers/sink.js';

describe('the shim with seconds schedules', () => {
  let sink: Sink;
  beforeAll(async () => {
    sink = await startSink();
  });
  afterAll(async () => sink.close());

  it('credits each start of an every-second job to the fire at or before it, not the next one', async () => {
    const dirs = shimDirs();
    const job = normalizedJob('tick', {
      name: 'beat',
      schedule: '* * * * * *',
      request: { url: `${sink.url}/beat` },
      policy: { concurrency: 'Allow' },
    });
    writeSpec(dirs.specDir, 'tick', job);
    const hash = jobChangeHash('tick', job, 0);
    // three fires in a row: each must name a second no later than its request's arrival (with
    // the +1 s tolerance read as "latest fire ≤ start + 1 s" it would name the next second)
    for (let i = 0; i < 3; i++) {
      const spawnedAt = Date.now();
      const run = await runShim('tick.beat', dirArgs(dirs));
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const request = sink.requests.at(-1);
      const key = String(request?.headers['x-cron-run-key']);
      const m = /^tick\/beat#(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)#([0-9a-f]{16})$/.exec(key);
      expect(m, key).not.toBeNull();
      expect(m?.[2]).toBe(hash);
      const fire = Date.parse(m?.[1] ?? '');
      expect(fire).toBeGreaterThanOrEqual(Math.floor(spawnedAt / 1000) * 1000);
      expect(fire).toBeLessThanOrEqual(request?.receivedAt ?? 0);
      expect(request?.headers['x-cron-fire-time']).toBe(String(fire / 1000));
    }
  });

  it('with --fire-time, picks the six-field schedule firing at that second', async () => {
    const dirs = shimDirs();
    const job = normalizedJob('multi', {
      name: 'sync',
      schedules: ['0 0 12 * * *', '*/10 * * * * *'],
      request: { url: `${sink.url}/sync` },
    });
    writeSpec(dirs.specDir, 'multi', job);
    await runShim('multi.sync', [...dirArgs(dirs), '--fire-time', '2026-03-01T12:00:10Z']);
    expect(sink.requests.at(-1)?.headers['x-cron-run-key']).toBe(
      `multi/sync#2026-03-01T12:00:10Z#${jobChangeHash('multi', job, 1)}`,
    );
    await runShim('multi.sync', [...dirArgs(dirs), '--fire-time', '2026-03-01T12:00:00Z']);
    expect(sink.requests.at(-1)?.headers['x-cron-run-key']).toBe(
      `multi/sync#2026-03-01T12:00:00Z#${jobChangeHash('multi', job, 0)}`,
    );
  });
});
