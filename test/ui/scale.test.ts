/**
 * The jobs page with 10,000 jobs (SPEC §13 "stays responsive"): 40 manifests of
 * 250 jobs, 20 ended runs each in the ledger (200,000 rows); the page shows
 * them virtualised, a filter answers, and the last job is reachable by
 * scrolling. How fast is measured by `bench/ui-scale.ts` (BENCHMARKS.md), not
 * asserted here; the test prints its times.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  foreignRequests,
  launchBrowser,
  login,
  newContext,
  SCALE,
  scaleManifests,
  screenshot,
  seedScaleRuns,
  startUiDaemon,
  watch,
  type UiDaemon,
} from './harness.js';

let d: UiDaemon;
let browser: Browser;

beforeAll(async () => {
  d = await startUiDaemon({ manifests: scaleManifests });
  await seedScaleRuns(d);
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

describe('jobs page at 10,000 jobs', () => {
  it('the API lists them all in one response', async () => {
    const t0 = performance.now();
    const { status, json } = await d.api('GET', '/api/v1/jobs');
    const ms = performance.now() - t0;
    expect(status).toBe(200);
    expect(json.jobs).toHaveLength(SCALE.apps * SCALE.perApp);
    expect(json.jobs[0].recent_outcomes).toHaveLength(20);
    console.log(`GET /api/v1/jobs with 10,000 jobs: ${ms.toFixed(0)} ms`);
  });

  it('shows the first rows virtualised, filters, and reaches the last job', async () => {
    const w = await watch(await newContext(browser));
    const page = w.page;
    await login(page, d.url, d.token);
    const t0 = Date.now();
    await page.goto(`${d.url}/jobs`);
    await page.locator('table.jobs tbody tr[aria-rowindex]').first().waitFor({ timeout: 10_000 });
    console.log(`jobs page, 10,000 jobs: first rows after ${Date.now() - t0} ms`);
    await page.locator('.filters .count', { hasText: /^10,000 of 10,000 jobs$/ }).waitFor();
    console.log(`jobs page, 10,000 jobs: all loaded after ${Date.now() - t0} ms`);
    const rendered = await page.locator('table.jobs tbody tr[aria-rowindex]').count();
    expect(rendered).toBeLessThan(100); // virtualised: only the rows in view are in the DOM
    await screenshot(page, 'jobs-10000');

    const t1 = Date.now();
    await page.getByLabel('Name').fill('app-17/job-24');
    await page.locator('.filters .count', { hasText: '10 of 10,000 jobs' }).waitFor();
    console.log(`jobs page, 10,000 jobs: filter answered after ${Date.now() - t1} ms`);
    await page.getByLabel('State').selectOption('failing');
    await page.locator('.filters .count', { hasText: '2 of 10,000 jobs' }).waitFor();
    await page.getByLabel('Name').fill('');
    await page.getByLabel('State').selectOption('all');
    await page.locator('.filters .count', { hasText: '10,000 of 10,000 jobs' }).waitFor();

    await page.locator('.scroller').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await page
      .locator('table.jobs tr', {
        hasText: `${SCALE.app(SCALE.apps - 1)}/${SCALE.job(SCALE.perApp - 1)}`,
      })
      .waitFor();
    expect(w.consoleErrors).toEqual([]);
    expect(foreignRequests(w, d.url)).toEqual([]);
  }, 120_000); // a browser over 10,000 rows on a loaded 2-core CI machine: behaviour, not speed
});
