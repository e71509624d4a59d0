/**
 * Host runs in the web UI (SPEC §15): a watched job is listed as watched with the host of its
 * last report; its runs name their host in every run table; the run page shows the host, the
 * exit code, each reported attempt and the reported output. A real daemon (`serve --watch`
 * in-process), real signed reports over HTTP, a real browser.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { report, endOf } from '../daemon/report-fixtures.js';
import { REPORT_SECRET, sendReport } from '../helpers/reports.js';
import { launchBrowser, login, newContext, watch, type WatchedPage } from './harness.js';

let daemon: DaemonHandle;
let browser: Browser;
let page: Page;
let w: WatchedPage;
const at = Math.floor(Date.now() / 60_000) * 60_000;
const started = report('started', at, {
  app: 'ops',
  job: 'backup',
  runKey: `ops/backup#${new Date(at).toISOString()}#abc123`,
  host: 'web-3',
  startedAt: at + 500,
});

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-ui-host-'));
  writeFileSync(
    join(dir, 'watch.json'),
    JSON.stringify({
      version: 1,
      app: 'ops',
      jobs: [
        {
          name: 'backup',
          schedule: '* * * * *',
          command: { argv: ['/usr/local/bin/backup'] },
          policy: { retries: { max_attempts: 2, min_seconds: 1, max_seconds: 1 } },
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
  });
  expect((await sendReport(daemon.url, started)).status).toBe(200);
  const end = endOf(started, {
    attempts: 2,
    exitCode: 0,
    output: 'dumping db\nbackup done: 3 files\n',
    attemptLog: [
      {
        attempt: 1,
        startedAt: at + 500,
        durationMs: 800,
        status: null,
        exitCode: 1,
        error: 'exit code 1',
      },
      { attempt: 2, startedAt: at + 2500, durationMs: 900, status: null, exitCode: 0, error: null },
    ],
  });
  expect((await sendReport(daemon.url, end)).status).toBe(200);
  browser = await launchBrowser();
  w = await watch(await newContext(browser));
  page = w.page;
  await login(page, daemon.url, daemon.token ?? '');
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await daemon?.stop(500);
});

it('lists the watched job with the host of its last report, and its runs with their host', async () => {
  await page.goto(`${daemon.url}/jobs`);
  const row = page.getByRole('row', { name: /ops\/backup/ });
  await row.getByText('watched · last report from web-3').waitFor();
  await page.goto(`${daemon.url}/jobs/ops/backup`);
  await page.getByRole('cell', { name: 'host web-3' }).first().waitFor();
  expect(w.consoleErrors).toEqual([]);
});

it('the run page shows the host, the exit code, every reported attempt and the output', async () => {
  await page.goto(`${daemon.url}/runs/${started.run.id}`);
  const facts = page.locator('dl.facts');
  await facts.getByText('host web-3').waitFor();
  expect(await facts.locator('dt:has-text("Host") + dd').innerText()).toBe('web-3');
  expect(await facts.locator('dt:has-text("Exit code") + dd').innerText()).toBe('0');
  const attempts = page.locator('section[aria-labelledby="attempts-h"] tbody tr');
  await expect.poll(() => attempts.count()).toBe(2);
  expect(await attempts.nth(0).innerText()).toContain('exit 1');
  expect(await attempts.nth(0).innerText()).toContain('exit code 1');
  await page.getByText('backup done: 3 files').waitFor();
  // a host's run is not the daemon's to cancel or replay
  expect(await page.getByRole('button', { name: 'Replay' }).count()).toBe(0);
  expect(w.consoleErrors).toEqual([]);
});
