/** Shared helpers of the lock tests: temp dirs, child processes, real Redis servers. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

import { freePort, SHARED_REDIS_URL } from '../helpers/common.js';

export { freePort, tempDir } from '../helpers/common.js';

/** A random key prefix isolating one test file in a shared Redis. */
export function randomPrefix(): string {
  return `cronix-test-${randomBytes(6).toString('hex')}:`;
}

/** Resolves with the first stdout line of `child` matching `pattern` (rejects on exit first). */
export function waitForLine(
  child: ChildProcessWithoutNullStreams,
  pattern: RegExp,
  timeoutMs = 15_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(
      () => done(new Error(`no line ${pattern} in ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString('utf8');
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      const hit = lines.find((l) => pattern.test(l));
      if (hit !== undefined) done(undefined, hit);
    };
    const onErr = (chunk: Buffer): void => {
      stderr += chunk.toString('utf8');
    };
    const onExit = (code: number | null): void =>
      done(new Error(`child exited (${code}) before ${pattern}: ${stderr}`));
    function done(err: Error | undefined, line?: string): void {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stderr.off('data', onErr);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(line ?? '');
    }
    child.stdout.on('data', onData);
    child.stderr.on('data', onErr);
    child.on('exit', onExit);
  });
}

/** Resolves when `child` has exited (at once if it already has). */
export function exited(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A `redis-server` child process of our own. */
export interface RedisServer {
  port: number;
  child: ChildProcessWithoutNullStreams;
  /** SIGKILLs the server and waits for it to exit. */
  kill(): Promise<void>;
}

/**
 * Starts `redis-server` on a free port (or on `port`, e.g. to restart one), no
 * persistence; extra args are appended.
 */
export async function startRedisServer(
  extra: readonly string[] = [],
  port?: number,
): Promise<RedisServer> {
  port ??= await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  await waitForLine(child, /Ready to accept connections/);
  return {
    port,
    child,
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}

/**
 * URL of the Redis the tests share: `$CRONIX_TEST_REDIS_URL`, else the local
 * one on 6379 if it answers, else a `redis-server` started for this file.
 */
export async function sharedRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const url = SHARED_REDIS_URL;
  const probe = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    connectTimeout: 1000,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    await probe.quit();
    return { url, stop: async () => {} };
  } catch {
    probe.disconnect();
    if (process.env['CRONIX_TEST_REDIS_URL'] !== undefined) throw new Error(`no Redis at ${url}`);
    const server = await startRedisServer();
    return { url: `redis://127.0.0.1:${server.port}`, stop: () => server.kill() };
  }
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}
