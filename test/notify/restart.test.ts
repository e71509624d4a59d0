/**
 * Durability of the notification queue across a crash, with real processes: a
 * `cronix serve` records a failure notification that its receiver keeps refusing
 * (503, Retry-After), is killed with SIGKILL, and the next `cronix serve` on the
 * same data dir delivers it — once — and shows it delivered in the API.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, spawnServe, TEST_SECRET, until, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let app: Sink;
let hook: Sink;
let accepting = false;
const accepted: string[] = [];

beforeAll(async () => {
  app = await startSink(() => ({ status: 500 }));
  hook = await startSink((_i, req) => {
    if (!accepting) return { status: 503, headers: { 'retry-after': '2' } };
    accepted.push(String(req.headers['x-cron-notification-id']));
    return { status: 200 };
  });
});
afterAll(async () => {
  await app.close();
  await hook.close();
});

it('undelivered notifications survive SIGKILL and are delivered once by the next daemon', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-notify-restart-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'crashy',
      notifiers: {
        chat: { type: 'webhook', url: `${hook.url}/hook`, secret_refs: ['env:HOOK_SECRET'] },
      },
      jobs: [
        {
          name: 'nightly',
          schedule: '0 0 1 1 *',
          request: { url: `${app.url}/nightly` },
          policy: { retries: { max_attempts: 1, min_seconds: 0, max_seconds: 1 } },
          auth: { secret_refs: ['env:CRON_SECRET'] },
          notify: [{ to: 'chat', on: ['failed', 'recovered'] }],
        },
      ],
    }),
  );
  const env = {
    PATH: process.env['PATH'],
    CRON_SECRET: TEST_SECRET,
    HOOK_SECRET: 'hook-secret-0123456789',
  };
  let daemon: Served = await spawnServe(dir, 0, { env });
  const trig = await api(daemon, 'POST', '/api/v1/jobs/crashy/nightly/trigger');
  expect(trig.status).toBe(202);
  // the receiver refused the first attempt: the notification is pending, then the daemon dies
  await hook.waitForRequests(1);
  const pending = await until(async () => {
    const r = await api(daemon, 'GET', '/api/v1/notifications');
    const list = r.json['notifications'] as Record<string, unknown>[];
    return list.length === 1 && list[0]!['attempts'] === 1 ? list[0] : undefined;
  });
  expect(pending).toMatchObject({ event: 'failed', status: 'pending', last_status: 503 });
  daemon.child.kill('SIGKILL');
  await daemon.exited;
  const before = hook.requests.length;

  accepting = true;
  daemon = await spawnServe(dir, 0, { env });
  try {
    const delivered = await until(
      async () => {
        const r = await api(daemon, 'GET', '/api/v1/notifications?status=delivered');
        return (r.json['notifications'] as Record<string, unknown>[])[0];
      },
      15_000,
      'the delivery after the restart',
    );
    expect(delivered).toMatchObject({
      id: pending['id'],
      event: 'failed',
      notifier: 'chat',
      notifier_type: 'webhook',
      status: 'delivered',
      last_status: 200,
      last_error: null,
    });
    expect(delivered['attempts']).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 2500)); // nothing more arrives
    expect(accepted).toEqual([pending['id']]);
    console.log(
      `after the restart: ${hook.requests.length - before} delivery request(s), ${String(delivered['attempts'])} attempts in all`,
    );
    // the API lists it; no secret or URL in the record
    const all = await api(daemon, 'GET', '/api/v1/notifications');
    expect(JSON.stringify(all.json)).not.toContain('hook-secret');
    expect(JSON.stringify(all.json)).not.toContain(hook.url);
    // bad filters name the field and the value
    const bad = await api(daemon, 'GET', '/api/v1/notifications?status=lost');
    expect(bad.status).toBe(400);
    expect(bad.json['error']).toMatchObject({
      code: 'invalid_request',
      path: 'status',
      message: 'expected one of pending, delivered, failed, found "lost"',
    });
  } finally {
    daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
}, 60_000);
