/**
 * Host mode with the real cron daemon (SPEC §15): `cronix apply --report-to` installs an
 * every-minute job into /etc/cron.d, Debian's `cron` runs `cronix trigger`, and a real
 * `cronix serve --watch` of the same manifest records the fire (trigger `host`, the host name,
 * attempts, exit code). Then cron is stopped: the next expected fire becomes `missed` within its
 * grace (10 s) + 5 s and the job's webhook notifier receives one `missed` message; cron is
 * started again: the next fire is recorded and the notifier receives `recovered`.
 *
 * Cron fires on minute boundaries, so this file takes two to three minutes (SLOW). It takes the
 * cron lock (test/helpers/cron-daemon.ts) and needs to own the daemon to stop it. Needs root.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectHostZone } from '../../src/reconcile/backends/crontab.js';
import { CLI } from '../helpers/cli.js';
import { freePort, until } from '../helpers/common.js';
import { CRON, holdCron, type CronHold } from '../helpers/cron-daemon.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { cronixAsync } from './cli-helpers.js';
import { cronSkipReason } from './cron-skip.js';

type Run = Record<string, unknown>;
const isRoot = process.geteuid?.() === 0;
const skipReason = cronSkipReason(CRON, isRoot);
if (skipReason !== null) {
  if (process.env['CI'] === 'true') {
    describe('cron + serve --watch end to end', () => {
      it('needs Debian cron and root (.ci/run installs cron)', () => {
        expect(skipReason).toBeNull();
      });
    });
  } else {
    console.warn(`cron + serve --watch end-to-end test SKIPPED: ${skipReason}`);
  }
}

describe.skipIf(skipReason !== null)('cron + serve --watch end to end', () => {
  const cronFile = `/etc/cron.d/cronixrpt${randomBytes(4).toString('hex')}`;
  let cron: CronHold | undefined;
  let sink: Sink | undefined;
  let served: Served | undefined;
  let root: string | undefined;

  afterAll(async () => {
    rmSync(cronFile, { force: true });
    served?.child.kill('SIGKILL');
    await served?.exited;
    await cron?.release();
    await sink?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  // the machine's one cron daemon: waiting for the other cron test to finish is not this test's time
  beforeAll(async () => {
    cron = await holdCron({ start: false }); // started once the cron.d file is written
  }, 600_000);

  it('records every fire cron makes; cron stopped → missed + one webhook message; started → recovered', async () => {
    sink = await startSink();
    root = mkdtempSync(join(tmpdir(), 'cronix-rpt-'));
    const secretFile = join(root, 'report-secret');
    const secret = randomBytes(24).toString('hex');
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
    const port = await freePort();
    const manifest = join(root, 'manifest.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        version: 1,
        app: 'cronrpt',
        notifiers: { hook: { type: 'webhook', url: `${sink.url}/notify` } },
        jobs: [
          {
            name: 'tick',
            schedule: '* * * * *',
            timezone: detectHostZone(process.env),
            command: { argv: ['/bin/echo', 'tick from cron'] },
            policy: {
              timeout_seconds: 10,
              retries: { max_attempts: 1 },
              watch: { grace_seconds: 10 },
            },
            notify: [{ to: 'hook', on: ['missed', 'recovered'] }],
          },
        ],
      }),
    );
    served = await spawnServe(root, port, {
      manifests: [],
      args: ['--watch', manifest, '--report-secret-ref', `file:${secretFile}`],
      env: { PATH: process.env['PATH'] },
    });
    const applied = await cronixAsync([
      'apply',
      manifest,
      '--crontab-path',
      cronFile,
      '--trigger-bin',
      CLI,
      '--spec-dir',
      join(root, 'jobs'),
      '--lock-dir',
      join(root, 'lock'),
      '--state-dir',
      join(root, 'state'),
      '--report-to',
      served.url,
      '--report-secret-ref',
      `file:${secretFile}`,
    ]);
    expect(applied.status, applied.stderr).toBe(0);
    expect(readFileSync(cronFile, 'utf8')).toContain(`--report-to ${served.url}`);
    await cron!.start();
    const runs = async (): Promise<Run[]> =>
      (await api(served!, 'GET', '/api/v1/runs?app=cronrpt&job=tick&limit=100')).json[
        'runs'
      ] as Run[];

    // 1. cron fires the shim, which reports: the fire is a host run in the ledger
    const first = await until(
      async () => (await runs()).find((r) => r['outcome'] === 'success'),
      80_000,
      'the first fire cron made',
    );
    expect(first).toMatchObject({ trigger: 'host', phase: 'ended', exit_code: 0, attempts: 1 });
    expect(typeof first['host']).toBe('string');
    expect((first['scheduled_time'] as string).slice(17)).toBe('00Z'); // a minute boundary

    // 2. cron stops: the next expected fire becomes missed within grace + 5 s, one message
    await cron!.stop();
    const missed = await until(
      async () => (await runs()).find((r) => r['outcome'] === 'missed'),
      90_000,
      'a missed fire',
    );
    const late =
      Date.parse(missed['ended_at'] as string) - Date.parse(missed['scheduled_time'] as string);
    console.log(`cron report e2e: missed recorded ${(late / 1000).toFixed(1)} s after its instant`);
    expect(late).toBeGreaterThanOrEqual(10_000);
    expect(late).toBeLessThanOrEqual(15_000);
    expect(missed['error']).toBe('no report from any host within 10 s');
    const events = (): string[] =>
      sink!.requests
        .filter((q) => q.url === '/notify' && q.bodyText !== '')
        .map((q) => (JSON.parse(q.bodyText) as { event: string }).event);
    await until(async () => (events().includes('missed') ? true : undefined), 20_000, 'missed');

    // 3. cron is back: the next fire is recorded and the notifier hears `recovered`
    await cron!.start();
    const recovered = await until(
      async () =>
        (await runs()).find(
          (r) =>
            r['outcome'] === 'success' &&
            (r['scheduled_time'] as string) > (missed['scheduled_time'] as string),
        ),
      80_000,
      'a fire after cron restarted',
    );
    expect(recovered).toMatchObject({ trigger: 'host', exit_code: 0 });
    await until(
      async () => (events().includes('recovered') ? true : undefined),
      20_000,
      'recovered',
    );
    expect(events().filter((e) => e === 'missed')).toHaveLength(1);
    // every instant from the first fire on has exactly one row
    const rows = await runs();
    const instants = rows.map((r) => r['scheduled_time'] as string);
    expect(new Set(instants).size).toBe(instants.length);
  }, 300_000);
});
