/**
 * Real `cronix trigger` processes in global scope against a `redis-server` of
 * our own (no persistence) that the test restarts, flushes and stops:
 *
 * - fencing tokens keep increasing across a restart and a FLUSHALL;
 * - a holder in flight when Redis loses its data overlaps with the next
 *   holder, and the later one carries the higher token (so the app can fence
 *   off the stale one); the stale holder cannot record its success and says
 *   so once (`record-failed`), with one terminal line;
 * - a stopped Redis (SIGSTOP) fails closed: exit 75, nothing sent;
 * - `redis://…/99` on a 16-database server: exit 3, nothing sent, no keys.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_EVENTS } from '../../src/shim/log.js';
import { sequence, startSink, type Sink } from '../helpers/sink.js';
import {
  dirArgs,
  events,
  normalizedJob,
  runShim,
  shimDirs,
  startShim,
  writeSpec,
  type ShimDirs,
  type ShimRun,
} from '../helpers/shim.js';
import { type RedisServer, startRedisServer } from '../locks/helpers.js';

const PREFIX = `cronix-chaos-${randomBytes(4).toString('hex')}:`;
const REDIS_ARGS = ['--databases', '16'];
let server: RedisServer;
let sink: Sink;
let n = 0;

beforeAll(async () => {
  server = await startRedisServer(REDIS_ARGS);
  sink = await startSink();
});
afterAll(async () => {
  server.child.kill('SIGCONT');
  await server.kill();
  await sink.close();
});

const redisUrl = (db = 0): string => `redis://127.0.0.1:${server.port}/${db}`;
const env = (): Record<string, string> => ({
  CRONIX_REDIS_URL: redisUrl(),
  CRONIX_REDIS_PREFIX: PREFIX,
});

async function restartRedis(): Promise<void> {
  await server.kill(); // no RDB, no AOF: the data is gone
  server = await startRedisServer(REDIS_ARGS, server.port);
}

function globalJob(dirs: ShimDirs): string {
  const name = `chaos-${++n}`;
  writeSpec(
    dirs.specDir,
    'app',
    normalizedJob('app', {
      name,
      schedule: '* * * * *',
      request: { url: `${sink.url}/${name}` },
      policy: {
        concurrency: 'Forbid',
        concurrency_scope: 'global',
        timeout_seconds: 10,
        retries: { max_attempts: 1 },
      },
    }),
  );
  return `app.${name}`;
}

const fireTime = (i: number): string => String(1_767_225_600 + i * 60);
const token = (i: number): number => Number(sink.requests[i]?.headers['x-cron-fencing-token']);

function expectOneTerminalLine(run: ShimRun): void {
  expect(run.lines.filter((l) => TERMINAL_EVENTS.has(String(l['event'])))).toHaveLength(1);
  expect(TERMINAL_EVENTS.has(String(run.lines.at(-1)?.['event']))).toBe(true);
}

describe('fencing tokens of real shims across Redis data loss', () => {
  it('strictly increase across a restart without persistence and a FLUSHALL', async () => {
    const dirs = shimDirs();
    const target = globalJob(dirs);
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    let i = 0;
    const fire = async (count: number): Promise<void> => {
      for (let k = 0; k < count; k++) {
        const r = await runShim(target, [...dirArgs(dirs), '--fire-time', fireTime(i++)], env());
        expect(r.code).toBe(0);
      }
    };
    await fire(5);
    await restartRedis();
    await fire(5);
    const raw = new Redis(redisUrl());
    await raw.flushall();
    raw.disconnect();
    await fire(5);
    const tokens = sink.requests.slice(before).map((_, k) => token(before + k));
    expect(tokens).toHaveLength(15);
    for (let k = 1; k < tokens.length; k++) expect(tokens[k]).toBeGreaterThan(tokens[k - 1]!);
  }, 120_000);

  it('a holder in flight during the loss overlaps its successor, which carries the higher token', async () => {
    const dirs = shimDirs();
    const target = globalJob(dirs);
    sink.setScript(sequence([{ status: 200, delayMs: 3000 }, 200]));
    const before = sink.requests.length;
    const a = startShim(target, [...dirArgs(dirs), '--fire-time', fireTime(100)], env());
    await sink.waitForRequests(before + 1, 15_000);
    await restartRedis(); // A's lock (and its connection) are gone while its request runs
    const b = await runShim(target, [...dirArgs(dirs), '--fire-time', fireTime(101)], env());
    const ra = await a.done;
    expect(b.code).toBe(0);
    expect(sink.requests.length - before).toBe(2);
    const [reqA, reqB] = sink.requests.slice(before);
    // the handlers overlapped: B arrived while A's handler was still running …
    expect(reqB!.receivedAtPerf).toBeLessThan(reqA!.handlerEndPerf ?? Infinity);
    // … and B's token is higher, so the app can reject A's late effects
    expect(token(before + 1)).toBeGreaterThan(token(before));

    // A succeeded but could not record it: one record-failed (warn), one terminal success
    expect(ra.code).toBe(0);
    expectOneTerminalLine(ra);
    expect(events(ra).filter((e) => e === 'success')).toHaveLength(1);
    const failed = ra.lines.filter((l) => l['event'] === 'record-failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 'warn' });
    expect(String(failed[0]?.['msg'])).toMatch(/could not record the outcome.*unavailable/);
    expect(ra.lines.at(-1)).toMatchObject({ event: 'success', level: 'info' });
  }, 120_000);
});

describe('Redis stopped or misaddressed', () => {
  it('SIGSTOP: exit 75 (lock-unavailable) within the connect deadline, nothing sent; fine after SIGCONT', async () => {
    const dirs = shimDirs();
    const target = globalJob(dirs);
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    server.child.kill('SIGSTOP');
    let stopped: ShimRun;
    const t0 = Date.now();
    try {
      stopped = await runShim(target, [...dirArgs(dirs), '--fire-time', fireTime(200)], env());
    } finally {
      server.child.kill('SIGCONT');
    }
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(stopped.code).toBe(75);
    expect(stopped.lines.at(-1)).toMatchObject({ event: 'lock-unavailable', level: 'error' });
    expectOneTerminalLine(stopped);
    expect(sink.requests.length).toBe(before);
    const again = await runShim(target, [...dirArgs(dirs), '--fire-time', fireTime(200)], env());
    expect(again.code).toBe(0);
    expect(sink.requests.length).toBe(before + 1);
  }, 60_000);

  it('--lock-backend redis://…/99 on a 16-database server: exit 3 naming the database, nothing sent or stored', async () => {
    const dirs = shimDirs();
    const target = globalJob(dirs);
    const before = sink.requests.length;
    const r = await runShim(
      target,
      [...dirArgs(dirs), '--lock-backend', redisUrl(99), '--fire-time', fireTime(300)],
      { CRONIX_REDIS_PREFIX: PREFIX },
    );
    expect(r.code).toBe(3);
    expect(r.lines.at(-1)).toMatchObject({ event: 'internal-error' });
    expect(String(r.lines.at(-1)?.['msg'])).toMatch(/has no database 99 .*check the \/db part/);
    expect(sink.requests.length).toBe(before);
    const raw = new Redis(redisUrl(0));
    expect(await raw.keys(`${PREFIX}*${target}*`)).toEqual([]);
    raw.disconnect();
  }, 60_000);
});
