/**
 * Calendars in a real browser (SPEC §16): the job page lists the blackout windows as written
 * (a holiday file by its name), "Skip next" is confirmed, the pending skip is shown with who
 * asked (the token's name) and recorded in the daemon; a job without a next fire has no button.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  launchBrowser,
  login,
  newContext,
  screenshot,
  startUiDaemon,
  watch,
  type UiDaemon,
  type WatchedPage,
} from './harness.js';

let d: UiDaemon;
let browser: Browser;
let w: WatchedPage;
let page: Page;
const holidays = join(mkdtempSync(join(tmpdir(), 'cronix-ui-cal-')), 'holidays.txt');

beforeAll(async () => {
  writeFileSync(holidays, '2031-12-24\n2031-12-25\n');
  const auth = { secret_refs: ['env:UI_TEST_SECRET'] };
  d = await startUiDaemon({
    manifests: (sink) => [
      {
        version: 1,
        app: 'cal',
        jobs: [
          {
            name: 'nightly',
            schedule: '0 3 * * *',
            request: { url: `${sink}/ok/nightly` },
            policy: {
              blackout: [
                { cron: '0 22 * * 5', duration_seconds: 7200 },
                { from: '2031-01-01T00:00:00Z', to: '2031-01-02T00:00:00Z' },
                { dates_file: holidays },
              ],
            },
            auth,
          },
          {
            name: 'off',
            schedule: '0 3 * * *',
            enabled: false,
            request: { url: `${sink}/ok/off` },
            auth,
          },
        ],
      },
    ],
  });
  browser = await launchBrowser();
  w = await watch(await newContext(browser));
  page = w.page;
  await login(page, d.url, d.token);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

it('the job page shows the windows; Skip next is confirmed, shown with who, and recorded', async () => {
  const next = (await d.api('GET', '/api/v1/jobs/cal/nightly')).json.next_fire as string;
  await page.goto(`${d.url}/jobs/cal/nightly`);
  const windows = page.locator('ul.blackout li');
  await windows.first().waitFor({ timeout: 10_000 });
  expect(await windows.allTextContents()).toEqual([
    '0 22 * * 5 for 7200 s',
    '2030-12-31 16:00:00 UTC-08:00 to 2031-01-01 16:00:00 UTC-08:00', // the viewer's zone
    `the dates in ${holidays}`,
  ]);
  expect(await page.locator('ul.skips').count()).toBe(0);

  await page.getByRole('button', { name: 'Skip next' }).click();
  await page.getByRole('button', { name: 'Skip it' }).click();
  await page.getByText('will be recorded skipped').waitFor({ timeout: 10_000 });
  const pending = page.getByRole('status', { name: 'Skipped fires' });
  await pending.waitFor({ timeout: 10_000 });
  expect(await pending.textContent()).toMatch(/The fire of .* will be skipped \(by default\)\./);
  await screenshot(page, 'calendar-skip-next');

  const job = await d.api('GET', '/api/v1/jobs/cal/nightly');
  expect(job.json.skips).toEqual([
    { app: 'cal', job: 'nightly', at: next, by: 'default', since: expect.any(String) },
  ]);
  const audit = await d.api('GET', '/api/v1/audit?action=skip');
  expect(audit.json.audit[0]).toMatchObject({ action: 'skip', app: 'cal', job: 'nightly' });

  // a disabled job has no next fire to skip
  await page.goto(`${d.url}/jobs/cal/off`);
  await page.getByRole('heading', { name: 'cal/off' }).waitFor({ timeout: 10_000 });
  expect(await page.getByRole('button', { name: 'Skip next' }).count()).toBe(0);
  expect(w.consoleErrors).toEqual([]);
});
