/**
 * Overlap stress: 200 contended fires of one Forbid/global job from 4
 * concurrent loops of real shim processes against a sink that records each
 * handler's start and end. No two handler intervals may overlap, and every
 * fire is accounted for: it ran (exit 0, one request) or was contended (exit 4).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSink, type Sink } from '../helpers/sink.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';
import { SHARED_REDIS_URL } from '../helpers/common.js';

const PREFIX = `cronix-stress-${randomBytes(4).toString('hex')}:`;
const LOOPS = 4;
const FIRES_PER_LOOP = 50;
let sink: Sink;

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200, delayMs: 40 }));
});
afterAll(async () => {
  await sink.close();
  const { Redis } = await import('ioredis');
  const redis = new Redis(SHARED_REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

it(`${LOOPS * FIRES_PER_LOOP} contended Forbid/global fires: zero overlapping handler intervals, every fire accounted for`, async () => {
  const dirs = shimDirs();
  writeSpec(
    dirs.specDir,
    'stress',
    normalizedJob('stress', {
      name: 'settle',
      schedule: '* * * * *',
      request: { url: `${sink.url}/settle` },
      policy: {
        concurrency: 'Forbid',
        concurrency_scope: 'global',
        timeout_seconds: 10,
        retries: { max_attempts: 1 },
      },
    }),
  );
  const env = { CRONIX_REDIS_URL: SHARED_REDIS_URL, CRONIX_REDIS_PREFIX: PREFIX };
  const codes: number[] = [];
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, loop) => {
      for (let i = 0; i < FIRES_PER_LOOP; i++) {
        // a distinct intended fire time per fire, so duplicate suppression never hides one
        const fireTime = String(1_767_225_600 + (loop * FIRES_PER_LOOP + i) * 60);
        const r = await runShim(
          'stress.settle',
          [...dirArgs(dirs), '--lock-dir', `${dirs.lockDir}-${loop}`, '--fire-time', fireTime],
          {
            ...env,
            CRONIX_HOST_ID: `host-${loop}`,
          },
        );
        codes.push(r.code ?? -1);
      }
    }),
  );
  const ran = codes.filter((c) => c === 0).length;
  const contended = codes.filter((c) => c === 4).length;
  expect(ran + contended).toBe(LOOPS * FIRES_PER_LOOP);
  expect(sink.requests.length).toBe(ran);
  expect(ran).toBeGreaterThan(0);
  const intervals = sink.requests
    .map((r) => [r.handlerStartPerf ?? r.receivedAtPerf, r.handlerEndPerf ?? Infinity] as const)
    .sort((a, b) => a[0] - b[0]);
  let overlaps = 0;
  for (let i = 1; i < intervals.length; i++)
    if ((intervals[i]?.[0] as number) < (intervals[i - 1]?.[1] as number)) overlaps++;
  expect(overlaps).toBe(0);
  console.log(`overlap stress: ${ran} ran, ${contended} contended, 0 overlaps`);
}, 300_000);
