/**
 * Guessing the token is slowed per client and logged without the value tried (finding 10,
 * SPEC §18): 2,000 wrong logins in a row were all answered 401 and nothing was logged. Now the
 * first few are 401, the rest 429 with `Retry-After` (the right token too, while locked out),
 * another client address is unaffected, and each evaluated failure is a warning that names the
 * client, never the value. The policy itself is tested on a clock of our own.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import {
  clientKey,
  FailureThrottle,
  FORGET_MS,
  FREE_FAILURES,
  MAX_CLIENTS,
  MAX_LOCK_SECONDS,
} from '../../src/http/throttle.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { manifestDir, spawnServe } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

describe('FailureThrottle', () => {
  it('free failures, then lock-outs doubling up to the cap; a success clears', () => {
    let now = 0;
    const t = new FailureThrottle(() => now);
    for (let i = 1; i <= FREE_FAILURES; i++)
      expect(t.fail('a')).toEqual({ failures: i, lockedSeconds: 0 });
    expect(t.retryAfter('a')).toBe(0);
    const locks: number[] = [];
    for (let i = 0; i < 14; i++) {
      const f = t.fail('a');
      locks.push(f.lockedSeconds);
      expect(t.retryAfter('a')).toBe(f.lockedSeconds);
      now += f.lockedSeconds * 1000; // waits it out, then fails again
      expect(t.retryAfter('a')).toBe(0);
    }
    expect(locks).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900]);
    expect(locks.every((l) => l <= MAX_LOCK_SECONDS)).toBe(true);
    expect(t.retryAfter('b')).toBe(0); // per client
    t.succeed('a');
    expect(t.fail('a')).toEqual({ failures: 1, lockedSeconds: 0 });
  });

  it('an old record is forgotten; the number of clients tracked is bounded', () => {
    let now = 0;
    const t = new FailureThrottle(() => now);
    for (let i = 0; i < FREE_FAILURES; i++) t.fail('a');
    now += FORGET_MS + 1;
    expect(t.fail('a').failures).toBe(1);
    for (let i = 0; i < MAX_CLIENTS + 50; i++) t.fail(`c${i}`);
    expect(t.size).toBe(MAX_CLIENTS);
  });

  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.0.0.7', '10.0.0.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('clientKey(%s) = %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });
});

describe('a real daemon', () => {
  let sink: Sink;
  let daemon: DaemonHandle;
  const warnings: string[] = [];
  // time stands still: a lock-out lasts until the test moves the clock
  const clock = new ManualClock(Date.parse('2026-03-01T12:00:00Z'));

  beforeAll(async () => {
    sink = await startSink();
    const dir = manifestDir('guard', [
      { name: 'a', schedule: '0 0 1 1 *', request: { url: `${sink.url}/a` } },
    ]);
    daemon = await startDaemon({
      manifests: [join(dir, 'manifest.json')],
      dataDir: join(mkdtempSync(join(tmpdir(), 'cronix-throttle-')), 'data'),
      listen: '127.0.0.1:0',
      env: { CRON_SECRET: 'throttle-secret-0123456789' },
      clock,
    });
    daemon.scheduler.events.on('warning', (w) => warnings.push(w.msg));
  });
  afterAll(async () => {
    await daemon.stop(1000);
    await sink.close();
  });

  /** POST /api/v1/session from `localAddress`. */
  function login(token: string, localAddress = '127.0.0.1') {
    const u = new URL(daemon.url);
    const body = JSON.stringify({ token });
    return new Promise<{ status: number; retryAfter: string | undefined; body: string }>(
      (resolve, reject) => {
        const req = request(
          {
            host: u.hostname,
            port: Number(u.port),
            path: '/api/v1/session',
            method: 'POST',
            localAddress,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                retryAfter: res.headers['retry-after'] as string | undefined,
                body: text,
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );
  }

  it('2,000 wrong tokens: a few 401s, the rest 429 with Retry-After; logged without the value', async () => {
    const statuses = new Map<number, number>();
    let retryAfter: string | undefined;
    for (let i = 0; i < 2000; i++) {
      const r = await login(`guess-${i}-0123456789abcdef`);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 429) {
        retryAfter = r.retryAfter;
        expect(JSON.parse(r.body)).toEqual({
          error: {
            code: 'too_many_requests',
            message: expect.stringMatching(/try again in \d+ s$/) as unknown,
          },
        });
      }
    }
    // 5 free failures, a 6th that locks the address out for 1 s, and then only 429s
    const wrong = statuses.get(401) ?? 0;
    expect(wrong).toBe(FREE_FAILURES + 1);
    expect(statuses.get(429)).toBe(2000 - wrong);
    expect(retryAfter).toBe('1');
    // each evaluated failure is one warning naming the client; never a value tried
    const failed = warnings.filter((w) => w.includes('failed login'));
    expect(failed.length).toBe(wrong);
    expect(failed[0]).toContain('from 127.0.0.1 on POST /api/v1/session (failure 1 in a row');
    expect(failed.some((w) => /refused for \d+ s$/.test(w))).toBe(true);
    expect(warnings.join('\n')).not.toContain('guess-');
  });

  it('while locked out even the right token waits, by login or bearer; another address does not', async () => {
    expect((await login(daemon.token ?? '')).status).toBe(429);
    const jobs = () =>
      fetch(`${daemon.url}/api/v1/jobs`, { headers: { authorization: `Bearer ${daemon.token}` } });
    const bearer = await jobs();
    expect(bearer.status).toBe(429);
    expect(bearer.headers.get('retry-after')).toBe('1');
    expect((await login(daemon.token ?? '', '127.0.0.2')).status).toBe(200);
    // the lock-out passes; the next wrong token locks for twice as long; a right one clears
    clock.t += 1000;
    expect((await login('guess-after-0123456789')).status).toBe(401);
    expect((await login(daemon.token ?? '')).retryAfter).toBe('2');
    clock.t += 2000;
    expect((await jobs()).status).toBe(200);
    expect((await login('guess-cleared-0123456789')).status).toBe(401); // failure 1 again
    expect((await login(daemon.token ?? '')).status).toBe(200);
  });
});

it('cronix serve logs failed logins and wrong bearer tokens, without the values', async () => {
  const sink = await startSink();
  const dir = manifestDir('guard', [
    { name: 'a', schedule: '0 0 1 1 *', request: { url: `${sink.url}/a` } },
  ]);
  const s = await spawnServe(dir, 0);
  for (let i = 0; i < 3; i++)
    await fetch(`${s.url}/api/v1/session`, {
      method: 'POST',
      body: JSON.stringify({ token: `guess-login-${i}-0123456789` }),
    });
  for (let i = 0; i < 3; i++)
    await fetch(`${s.url}/api/v1/runs`, { headers: { authorization: `Bearer guess-bearer-${i}` } });
  s.child.kill('SIGTERM');
  await s.exited;
  await sink.close();
  const lines = s
    .output()
    .split('\n')
    .filter((l) => l.includes('auth: '));
  expect(lines.filter((l) => l.includes('failed login (wrong token)'))).toHaveLength(3);
  expect(lines.filter((l) => l.includes('wrong bearer token'))).toHaveLength(3);
  expect(lines.every((l) => (JSON.parse(l) as { level: string }).level === 'warn')).toBe(true);
  expect(lines.at(-1)).toContain(
    'auth: wrong bearer token from 127.0.0.1 on GET /api/v1/runs (failure 6 in a row; the value tried is not logged); this address is refused for 1 s',
  );
  expect(s.output()).not.toContain('guess-');
});
