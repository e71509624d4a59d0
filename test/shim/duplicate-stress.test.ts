/**
 * Once per run key under concurrency (SPEC §5.8, §9 item 4), with real
 * processes: in every round six `cronix trigger app.job --fire-time T` start at
 * once (Forbid, a 20 ms handler), all with the same run key. Exactly one may
 * deliver it; the others are contended (exit 4) or find it already succeeded
 * (exit 0, duplicate-suppressed). Before the fix, the lock was released before
 * the success was recorded and about one round in 30 delivered twice.
 *
 * Host scope: the six share one lock dir and state dir (one host). Global
 * scope: each is its own "host" (own lock and state dir, own CRONIX_HOST_ID),
 * so only Redis can stop a second delivery. Rounds run in parallel lanes, each
 * lane on its own job, to keep the runtime down; lanes do not contend.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type Sink } from '../helpers/sink.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';
import { deleteKeys, sharedRedis } from '../locks/helpers.js';

/** Rounds per scope (the issue asks for at least 300). */
const ROUNDS = Number(process.env['CRONIX_STRESS_ROUNDS'] ?? 300);
const SHIMS_PER_ROUND = 6;
const LANES = 4;
const PREFIX = `cronix-dup-${randomBytes(4).toString('hex')}:`;

let sink: Sink;
let redis: { url: string; stop: () => Promise<void> };

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200, delayMs: 20 }));
  redis = await sharedRedis();
});
afterAll(async () => {
  await sink.close();
  const { Redis } = await import('ioredis');
  const client = new Redis(redis.url);
  await deleteKeys(client, PREFIX);
  client.disconnect();
  await redis.stop();
});

describe.each(['host', 'global'] as const)('%s scope', (scope) => {
  it(`${ROUNDS} rounds of ${SHIMS_PER_ROUND} concurrent fires of one run key: each delivered exactly once`, async () => {
    const started = Date.now();
    const dirs = shimDirs(`cronix-dup-${scope}-`);
    const targets = Array.from({ length: LANES }, (_, lane) => {
      const name = `dup-${scope}-${lane}`;
      writeSpec(
        dirs.specDir,
        'stress',
        normalizedJob('stress', {
          name,
          schedule: '* * * * *',
          request: { url: `${sink.url}/${name}` },
          policy: {
            concurrency: 'Forbid',
            concurrency_scope: scope,
            timeout_seconds: 10,
            retries: { max_attempts: 1 },
          },
        }),
      );
      return `stress.${name}`;
    });
    const env = { CRONIX_REDIS_URL: redis.url, CRONIX_REDIS_PREFIX: PREFIX };
    const codes = new Map<number, number>();
    const before = sink.requests.length;
    await Promise.all(
      targets.map(async (target, lane) => {
        for (let round = lane; round < ROUNDS; round += LANES) {
          const fireTime = String(1_767_225_600 + round * 60);
          const runs = await Promise.all(
            Array.from({ length: SHIMS_PER_ROUND }, (_, i) => {
              const own =
                scope === 'global'
                  ? ['--lock-dir', `${dirs.lockDir}-${i}`, '--state-dir', `${dirs.stateDir}-${i}`]
                  : [];
              return runShim(target, [...dirArgs(dirs), ...own, '--fire-time', fireTime], {
                ...env,
                CRONIX_HOST_ID: scope === 'global' ? `host-${i}` : 'host-0',
              });
            }),
          );
          for (const r of runs) codes.set(r.code ?? -1, (codes.get(r.code ?? -1) ?? 0) + 1);
        }
      }),
    );
    const deliveries = new Map<string, number>();
    for (const req of sink.requests.slice(before)) {
      const key = String(req.headers['x-cron-run-key']);
      deliveries.set(key, (deliveries.get(key) ?? 0) + 1);
    }
    const duplicates = [...deliveries.values()].reduce((sum, n) => sum + n - 1, 0);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `${scope} scope: ${ROUNDS} rounds × ${SHIMS_PER_ROUND} shims in ${seconds}s; ` +
        `${deliveries.size} run keys delivered, ${duplicates} duplicates; exit codes ${JSON.stringify(Object.fromEntries(codes))}`,
    );
    expect(duplicates).toBe(0);
    expect(deliveries.size).toBe(ROUNDS); // every round delivered its run key once
    expect([...codes.keys()].every((c) => c === 0 || c === 4)).toBe(true);
  }, 900_000);
});
