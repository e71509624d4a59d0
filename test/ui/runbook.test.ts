/**
 * The operator tools in a real browser (SPEC §16). The job page's backfill panel: a dry run says
 * how many runs it would start, `Start backfill` (confirmed first) starts it as `ui`, and its
 * progress shows live until it is done. The dead-letters page: counts per job, `Replay`
 * (confirmed), `Dismiss` with a note.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  launchBrowser,
  login,
  newContext,
  screenshot,
  startUiDaemon,
  until,
  watch,
  type UiDaemon,
  type WatchedPage,
} from './harness.js';

let d: UiDaemon;
let browser: Browser;
let w: WatchedPage;
let page: Page;

beforeAll(async () => {
  d = await startUiDaemon();
  browser = await launchBrowser();
  w = await watch(await newContext(browser));
  page = w.page;
  await login(page, d.url, d.token);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

it('a dry run, then Start backfill (confirmed): progress shows until done, recorded as ui', async () => {
  await page.goto(`${d.url}/jobs/shop/report`);
  await page.getByRole('heading', { name: 'Backfill' }).waitFor();
  await page.getByLabel('From (RFC 3339)').fill('2020-01-01T00:00:00Z');
  await page.getByLabel('To, excluded').fill('2026-01-01T00:00:00Z');
  await page.getByLabel('Parallel').fill('2');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page.getByText('6 run(s) would start, of 6 instant(s)').waitFor();
  expect((await d.api('GET', '/api/v1/backfills')).json.backfills).toEqual([]);

  await page.getByRole('button', { name: 'Start backfill' }).click();
  await page.getByRole('button', { name: 'Start the backfill' }).click();
  await page.getByText('Backfill of 6 run(s) started.').waitFor();
  const row = page.locator('table.backfills tbody tr').first();
  await row.getByText('6/6 done · 6 succeeded · 0 failed').waitFor({ timeout: 20_000 });
  await row.getByText('done', { exact: true }).waitFor();
  await screenshot(page, 'backfill-done');
  const [b] = (await d.api('GET', '/api/v1/backfills?app=shop&job=report')).json.backfills;
  expect(b).toMatchObject({ state: 'done', created_by: 'default', parallel: 2, total: 6 });
  await until(
    async () =>
      d.sink.requests.filter((r) => r.url.startsWith('/ok/report')).length >= 6 ? true : false,
    'six requests at the sink',
  );
  expect(await row.locator('td[data-label="By"]').textContent()).toBe('default');
  expect(w.consoleErrors).toEqual([]);
});

it('Dead letters: counts per job, Replay (confirmed), Dismiss with a note', async () => {
  const t = await d.api('POST', '/api/v1/jobs/billing/reject/trigger');
  expect(t.status).toBe(202);
  await until(
    async () =>
      (await d.api('GET', '/api/v1/dead-letters?app=billing&job=reject')).json.dead_letters
        .length === 1,
    'a dead letter of billing/reject',
  );
  await page.goto(`${d.url}/dead-letters`);
  await page.getByRole('heading', { name: 'Dead letters', exact: true }).waitFor({ timeout: 5000 });
  const counts = page.locator('table.dead-letter-counts');
  await counts.getByRole('link', { name: 'billing/reject' }).waitFor({ timeout: 5000 });
  expect(
    await counts.locator('tr', { hasText: 'billing/reject' }).locator('td').nth(1).textContent(),
  ).toBe('1');
  await page.getByLabel('Job').selectOption('billing/reject');
  const before = (await d.api('GET', '/api/v1/runs?app=billing&job=reject')).json.runs.length;
  await page.getByRole('button', { name: 'Replay' }).click();
  await page.getByRole('button', { name: 'Replay them' }).click();
  await page.getByText('Replayed 1 dead letter(s).').waitFor({ timeout: 5000 });
  // the replay was rejected again: a newer dead letter of the same key replaces the old one
  await until(
    async () =>
      (await d.api('GET', '/api/v1/runs?app=billing&job=reject')).json.runs.length > before,
    'the replay',
  );
  await page.getByLabel('Note for a dismissal').fill('the app rejects it on purpose');
  const row = page.locator('table.runs tbody tr').first();
  await row.getByRole('button', { name: 'Dismiss' }).click();
  await page.getByText('Dismissed 1 dead letter(s).').waitFor();
  await until(
    async () =>
      (await d.api('GET', '/api/v1/dead-letters?app=billing&job=reject')).json.dead_letters
        .length === 0,
    'the dismissal',
  );
  await screenshot(page, 'dead-letters');
  expect(w.consoleErrors).toEqual([]);
});
