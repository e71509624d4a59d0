/**
 * `cronix notifications` (the built binary) and the live `notification` events against a real
 * daemon in this process: a failing job notifies a webhook notifier on a local sink; the
 * command lists the notification with its delivery, filters it, prints the API's JSON with
 * `-o json`, and turns bad filters into usage errors (exit 2) naming the flag and the value,
 * before calling the daemon; the event stream reports the notification as it is recorded and
 * delivered, without the notifier's URL or secret.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { cronixAsync as cronix } from '../helpers/cli.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  sink = await startSink((_, req) =>
    req.url.startsWith('/hook') ? { status: 200, body: 'ok' } : { status: 503, body: 'down' },
  );
  const dir = mkdtempSync(join(tmpdir(), 'cronix-notifications-cli-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      notifiers: {
        chat: { type: 'webhook', url: `${sink.url}/hook`, secret_refs: ['env:HOOK_SECRET'] },
      },
      jobs: ['bill', 'quiet'].map((name) => ({
        name,
        schedule: '0 0 1 1 *',
        request: { url: `${sink.url}/${name}` },
        policy: { retries: { max_attempts: 1 } },
        auth: { secret_refs: ['env:APP_SECRET'] },
        notify: [{ to: 'chat' }],
      })),
    }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { APP_SECRET: 'app-secret-0123456789', HOOK_SECRET: 'hook-secret-0123456789' },
  });
  env = { ...process.env, CRONIX_URL: daemon.url, CRONIX_TOKEN: daemon.token ?? '' };
  const res = await fetch(`${daemon.url}/api/v1/jobs/shop/bill/trigger`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBe(202);
  await until(async () => {
    const r = await fetch(`${daemon.url}/api/v1/notifications?status=delivered`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    const json = (await r.json()) as { notifications: unknown[] };
    return json.notifications.length === 1 ? true : undefined;
  });
});

afterAll(async () => {
  await daemon?.stop(1000);
  await sink?.close();
});

it('lists the notification with its delivery, and filters', async () => {
  const all = await cronix(['notifications'], { env });
  expect(all.status).toBe(0);
  const [head, ...rows] = all.stdout.trim().split('\n');
  expect(head).toMatch(/^ID\s+CREATED_AT\s+JOB\s+EVENT\s+NOTIFIER\s+COUNT\s+STATUS/);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatch(/\sshop\/bill\s+failed\s+chat\s+1\s+delivered\s+1\s+200\s+-$/);

  const json = await cronix(
    ['notifications', '--job', 'shop.bill', '--event', 'failed', '-o', 'json'],
    {
      env,
    },
  );
  expect(json.status).toBe(0);
  const listed = JSON.parse(json.stdout) as { notifications: Record<string, unknown>[] };
  expect(listed.notifications).toHaveLength(1);
  expect(listed.notifications[0]).toMatchObject({ app: 'shop', job: 'bill', status: 'delivered' });
  expect(json.stdout).not.toContain('hook-secret'); // never a credential

  for (const args of [
    ['--job', 'shop.quiet'],
    ['--status', 'failed'],
    ['--event', 'recovered', '--limit', '5'],
  ]) {
    const none = await cronix(['notifications', ...args, '-o', 'json'], { env });
    expect(none.status, args.join(' ')).toBe(0);
    expect(JSON.parse(none.stdout), args.join(' ')).toEqual({ notifications: [] });
  }
});

it('bad filters are usage errors naming the flag and the value', async () => {
  const cases: [string[], RegExp][] = [
    [
      ['--status', 'lost'],
      /^error: --status must be one of pending, delivered, failed; found "lost"$/m,
    ],
    [
      ['--event', 'boom'],
      /^error: --event must be one of failed, missed, recovered, slow; found "boom"$/m,
    ],
    [['--limit', '0'], /^error: --limit must be a whole number from 1 to 1000, found "0"$/m],
    [
      ['--job', 'shop'],
      /^error: --job must name a job as app\/job \(or app\.job\), found "shop"$/m,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await cronix(['notifications', ...args], { env });
    expect(r.status, args.join(' ')).toBe(2);
    expect(r.stderr, args.join(' ')).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }
});

it('the event stream carries each notification change: recorded, then its delivery', async () => {
  const res = await fetch(`${daemon.url}/api/v1/events?app=shop&job=quiet`, {
    headers: { authorization: `Bearer ${daemon.token}` },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const read = async (until: (t: string) => boolean): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!until(text) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  };
  await read((t) => t.includes('event: ready'));
  const trigger = await fetch(`${daemon.url}/api/v1/jobs/shop/quiet/trigger`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(trigger.status).toBe(202);
  await read((t) => t.includes('"status":"delivered"'));
  await reader.cancel();
  const changes = text
    .split('\n\n')
    .filter((block) => block.includes('event: notification'))
    .map((block) => {
      const data = block
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6);
      return (JSON.parse(data) as { notification: Record<string, unknown> }).notification;
    });
  expect(changes.map((n) => [n['job'], n['event'], n['status'], n['attempts']])).toEqual([
    ['quiet', 'failed', 'pending', 0],
    ['quiet', 'failed', 'delivered', 1],
  ]);
  expect(new Set(changes.map((n) => n['id'])).size).toBe(1);
  expect(text).not.toContain('/hook'); // never the notifier's URL
  expect(text).not.toContain('hook-secret');
});
