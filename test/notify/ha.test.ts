/**
 * Notifications in high availability (SPEC §10, §12), two replicas on a real
 * PostgreSQL (a schema for this file): only the leader notifies, each event
 * once; the grouping state lives in the store, so after a handover the new
 * leader sends the recovery of a failure the old leader notified.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DaemonHandle } from '../../src/http/serve.js';
import { roleOf, startReplica } from '../helpers/ha.js';
import { dropSchema, schemaName } from '../helpers/pg.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let app: Sink;
let hook: Sink;
let a: DaemonHandle | undefined;
let b: DaemonHandle | undefined;
const schema = schemaName('notify_ha');
const dir = mkdtempSync(join(tmpdir(), 'cronix-notify-ha-'));

beforeAll(async () => {
  app = await startSink(() => ({ status: 500 }));
  hook = await startSink(() => ({ status: 200 }));
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({
      version: 1,
      app: 'ha',
      notifiers: { chat: { type: 'webhook', url: `${hook.url}/hook` } },
      jobs: [
        {
          name: 'job',
          schedule: '0 0 1 1 *',
          request: { url: `${app.url}/job` },
          policy: {
            concurrency: 'Allow',
            retries: { max_attempts: 1, min_seconds: 0, max_seconds: 1 },
          },
          auth: { secret_refs: ['env:S'] },
          notify: [{ to: 'chat' }],
        },
      ],
    }),
  );
});
afterAll(async () => {
  await b?.stop(500);
  await a?.stop(500);
  await app.close();
  await hook.close();
  await dropSchema(schema);
});

const start = (replica: string): Promise<DaemonHandle> =>
  startReplica(dir, schema, replica, { S: 'ha-secret-0123456789' });
const trigger = (d: DaemonHandle) =>
  fetch(`${d.url}/api/v1/jobs/ha/job/trigger`, { method: 'POST' }).then((r) => r.status);
/**
 * The events the receiver heard, one per notification: delivery is at least once (a delivery in
 * flight when a leader term ends is repeated by the next), and a repeat carries the same
 * `X-Cron-Notification-Id`, which receivers dedupe on. Two notifications of one event would
 * carry two ids and show here twice.
 */
const events = () => {
  const ids = new Set<string>();
  const out: string[] = [];
  for (const r of hook.requests) {
    const id = r.headers['x-cron-notification-id'];
    expect(typeof id).toBe('string');
    if (ids.has(id as string)) continue;
    ids.add(id as string);
    out.push((JSON.parse(r.bodyText) as { event: string }).event);
  }
  return out;
};

it('only the leader notifies, each event once; the next leader sends the recovery', async () => {
  a = await start('a');
  await until(async () => ((await roleOf(a!)) === 'leader' ? true : undefined));
  b = await start('b');
  // two failures, triggered on the standby (forwarded to the leader): one grouped message
  expect(await trigger(b)).toBe(202);
  expect(await trigger(b)).toBe(202);
  await until(() => (hook.requests.length >= 1 ? true : undefined));
  await new Promise((r) => setTimeout(r, 1500)); // no second message from either replica
  expect(events()).toEqual(['failed']);
  // the leader leaves; b leads and sees the open group in the store
  await a.stop(500);
  a = undefined;
  await until(async () => ((await roleOf(b!)) === 'leader' ? true : undefined), 10_000);
  app.setScript(() => ({ status: 200 }));
  await until(async () => ((await trigger(b!)) === 202 ? true : undefined));
  await until(() => (events().length >= 2 ? true : undefined));
  await new Promise((r) => setTimeout(r, 1500));
  expect(events()).toEqual(['failed', 'recovered']);
  const listed = (await (await fetch(`${b.url}/api/v1/notifications`)).json()) as {
    notifications: { event: string; status: string; count: number }[];
  };
  expect(listed.notifications.map((n) => [n.event, n.status, n.count])).toEqual([
    ['recovered', 'delivered', 2],
    ['failed', 'delivered', 1],
  ]);
}, 60_000);
