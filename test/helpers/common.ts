/**
 * The small helpers every test folder needs, in one place: free ports, sleeps, temp dirs,
 * polling until a condition holds.
 */
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A port on 127.0.0.1 that nothing listened on a moment ago (bound by the OS, then released).
 * For a server the test starts itself as a child, prefer binding port 0 in the child and
 * reading the port it reports: between this release and the child's bind another process can
 * take the port.
 */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * The machine's shared Redis (`$CRONIX_TEST_REDIS_URL`, else the one on 127.0.0.1:6379): tests
 * that use it isolate themselves by key prefix; a test that stops or restarts Redis starts a
 * `redis-server` of its own on a port of its own (test/locks/helpers.ts).
 */
export const SHARED_REDIS_URL = process.env['CRONIX_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Resolves after `ms` (real time: for real processes and servers, never a fake clock). */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A fresh temp dir under the OS temp dir, named `cronix-<tag>-…`. */
export function tempDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `cronix-${tag}-`));
}

/** Waits until `check` returns a value other than undefined, polling every 50 ms. */
export async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
