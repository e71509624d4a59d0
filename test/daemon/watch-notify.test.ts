/**
 * Host mode's notifications (SPEC §15 with §12): a watched job whose fires stop coming notifies
 * `missed` once (the next misses are grouped), and the first reported success after them
 * notifies `recovered`. A real daemon (`serve --watch` in-process), real reports over HTTP, a
 * real webhook receiver; grace 10 s (the least) and a schedule every second.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { until } from '../helpers/common.js';
import { REPORT_SECRET, sendReport } from '../helpers/reports.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { report } from './report-fixtures.js';

let daemon: DaemonHandle;
let hook: Sink;

beforeAll(async () => {
  hook = await startSink();
  const dir = mkdtempSync(join(tmpdir(), 'cronix-watch-notify-'));
  writeFileSync(
    join(dir, 'watch.json'),
    JSON.stringify({
      version: 1,
      app: 'ops',
      notifiers: { chat: { type: 'webhook', url: `${hook.url}/hook` } },
      jobs: [
        {
          name: 'tick',
          schedule: '* * * * * *',
          command: { argv: ['/bin/true'] },
          policy: { retries: { max_attempts: 1 }, watch: { grace_seconds: 10 } },
          notify: [{ to: 'chat', on: ['missed', 'recovered'], repeat_every_seconds: 3600 }],
        },
      ],
    }),
  );
  daemon = await startDaemon({
    manifests: [],
    watch: [join(dir, 'watch.json')],
    reportSecretRefs: ['env:REPORT_SECRET'],
    env: { REPORT_SECRET },
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    noAuth: true,
  });
}, 30_000);
afterAll(async () => {
  await daemon?.stop(500);
  await hook?.close();
});

const events = () =>
  hook.requests.map(
    (r) => JSON.parse(r.bodyText) as { event: string; count: number; text: string },
  );

it('fires that never come notify missed once, grouped; the next reported success notifies recovered', async () => {
  const first = await until(
    () => (events().some((e) => e.event === 'missed') ? events() : undefined),
    40_000,
    'the missed notification',
  );
  expect(first.filter((e) => e.event === 'missed')).toHaveLength(1);
  expect(first[0]!.text).toContain('ops/tick');
  // more instants are missed meanwhile: grouped, no second message within repeat_every_seconds
  const missedRows = async () =>
    (
      (await (await fetch(`${daemon.url}/api/v1/runs?app=ops&outcome=missed`)).json()) as {
        runs: unknown[];
      }
    ).runs.length;
  await until(
    async () => ((await missedRows()) >= 4 ? true : undefined),
    20_000,
    'more missed rows',
  );
  expect(events().filter((e) => e.event === 'missed')).toHaveLength(1);
  // a host reports a success: recovered
  const at = Math.floor(Date.now() / 1000) * 1000;
  const ok = report('ended', at, {
    app: 'ops',
    job: 'tick',
    runKey: `ops/tick#${new Date(at).toISOString()}#x`,
  });
  expect((await sendReport(daemon.url, ok)).status).toBe(200);
  const recovered = await until(
    () => events().find((e) => e.event === 'recovered'),
    20_000,
    'the recovered notification',
  );
  expect(recovered.text).toContain('ops/tick');
}, 90_000);
