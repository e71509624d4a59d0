/**
 * Global scope over TLS (`rediss://`), with real processes: a `redis-server` of our own that
 * speaks only TLS, with a certificate from a CA of the test's own making. A shim that trusts
 * that CA (`NODE_EXTRA_CA_CERTS`, as docs/locks.md says) takes the lock and delivers, with a
 * fencing token; one that does not trust it, or reaches the server under a name the
 * certificate does not carry, fails closed (exit 75, nothing sent).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, tempDir } from '../helpers/common.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';
import { type RedisServer, startRedisServer } from '../locks/helpers.js';

let sink: Sink;
let server: RedisServer;
let tlsPort: number;
let ca: string;

beforeAll(async () => {
  const dir = tempDir('redis-tls');
  ca = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
    '-keyout', key, '-out', ca, '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost',
  ], { stdio: 'ignore' }); // prettier-ignore
  tlsPort = await freePort();
  server = await startRedisServer([
    '--port', '0', '--tls-port', String(tlsPort), '--tls-cert-file', ca, '--tls-key-file', key,
    '--tls-ca-cert-file', ca, '--tls-auth-clients', 'no',
  ]); // prettier-ignore
  sink = await startSink();
});
afterAll(async () => {
  await server?.kill();
  await sink?.close();
});

function job(): { target: string; dirs: ReturnType<typeof shimDirs> } {
  const dirs = shimDirs('cronix-tls-');
  writeSpec(
    dirs.specDir,
    'app',
    normalizedJob('app', {
      name: 'tls',
      schedule: '* * * * *',
      request: { url: `${sink.url}/tls` },
      policy: { concurrency: 'Forbid', concurrency_scope: 'global', retries: { max_attempts: 1 } },
    }),
  );
  return { target: 'app.tls', dirs };
}

it('a shim trusting the CA takes the lock over TLS and delivers with a fencing token', async () => {
  const { target, dirs } = job();
  const run = await runShim(target, dirArgs(dirs), {
    CRONIX_REDIS_URL: `rediss://localhost:${tlsPort}`,
    NODE_EXTRA_CA_CERTS: ca,
  });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const got = sink.requests.filter((r) => r.url === '/tls');
  expect(got).toHaveLength(1);
  expect(Number(got[0]!.headers['x-cron-fencing-token'])).toBeGreaterThan(0);
});

it('a shim that does not trust the certificate fails closed: exit 75, nothing sent', async () => {
  const { target, dirs } = job();
  const before = sink.requests.length;
  const run = await runShim(target, dirArgs(dirs), {
    CRONIX_REDIS_URL: `rediss://localhost:${tlsPort}`,
  });
  expect(run.code).toBe(75);
  expect(run.lines.at(-1)).toMatchObject({ event: 'lock-unavailable' });
  expect(String(run.lines.at(-1)?.['err'])).toMatch(/certificate/i);
  expect(sink.requests.length).toBe(before);
});

it('a certificate that does not name the host fails closed, even from a trusted CA', async () => {
  const { target, dirs } = job();
  const before = sink.requests.length;
  const run = await runShim(target, dirArgs(dirs), {
    CRONIX_REDIS_URL: `rediss://127.0.0.1:${tlsPort}`, // the certificate names only localhost
    NODE_EXTRA_CA_CERTS: ca,
  });
  expect(run.code).toBe(75);
  expect(String(run.lines.at(-1)?.['err'])).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
  expect(sink.requests.length).toBe(before);
});
