/**
 * The jobs page with 10,000 jobs (SPEC §13 "stays responsive"): 40 manifests of
 * 250 jobs, 20 ended runs each in the ledger (200,000 rows); the first rows
 * show within 2 s of navigation, a filter answers at once, and the last job
 * is reachable by scrolling. The times are printed for BENCHMARKS.md.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewRun, RunOutcome } from '../../src/daemon/store/types.js';
import { newRun } from '../daemon/store-fixtures.js';
import {
  foreignRequests,
  launchBrowser,
  login,
  newContext,
  screenshot,
  startUiDaemon,
  watch,
  type UiDaemon,
} from './harness.js';

const APPS = 40;
const PER_APP = 250;
const app = (a: number) => `app-${String(a).padStart(2, '0')}`;
const job = (j: number) => `job-${String(j).padStart(3, '0')}`;

function manifests(sinkUrl: string): Record<string, unknown>[] {
  return Array.from({ length: APPS }, (_, a) => ({
    version: 1,
    app: app(a),
    jobs: Array.from({ length: PER_APP }, (_, j) => ({
      name: job(j),
      schedule: `${j % 60} ${a % 24} 1 1 *`,
      timezone: ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'][j % 4],
      request: { url: `${sinkUrl}/ok/${a}/${j}` },
      auth: { secret_refs: ['env:UI_TEST_SECRET'] },
    })),
  }));
}

let d: UiDaemon;
let browser: Browser;

beforeAll(async () => {
  d = await startUiDaemon({ manifests });
  const outcomes: RunOutcome[] = ['success', 'success', 'success', 'retries_exhausted', 'skipped'];
  for (let a = 0; a < APPS; a++) {
    const rows: NewRun[] = [];
    for (let j = 0; j < PER_APP; j++)
      for (let k = 0; k < 20; k++)
        rows.push(
          newRun({
            app: app(a),
            job: job(j),
            trigger: 'manual',
            scheduleIndex: null,
            phase: 'ended',
            outcome: outcomes[(j + k) % outcomes.length]!,
            endedAt: Date.now() - k * 60_000,
          }),
        );
    await d.daemon.store.write(rows.map((run) => ({ kind: 'insert' as const, run })));
  }
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
    expect(json.jobs).toHaveLength(APPS * PER_APP);
    expect(json.jobs[0].recent_outcomes).toHaveLength(20);
    console.log(`GET /api/v1/jobs with 10,000 jobs: ${ms.toFixed(0)} ms`);
  });

  it('first rows within 2 s, filters at once, the last job reachable', async () => {
    const w = await watch(await newContext(browser));
    const page = w.page;
    await login(page, d.url, d.token);
    const t0 = Date.now();
    await page.goto(`${d.url}/jobs`);
    await page.locator('table.jobs tbody tr[aria-rowindex]').first().waitFor({ timeout: 10_000 });
    const firstRows = Date.now() - t0;
    console.log(`jobs page, 10,000 jobs: first rows after ${firstRows} ms`);
    expect(firstRows).toBeLessThan(2_000);
    await page.locator('.filters .count', { hasText: /^10,000 of 10,000 jobs$/ }).waitFor();
    console.log(`jobs page, 10,000 jobs: all loaded after ${Date.now() - t0} ms`);
    const rendered = await page.locator('table.jobs tbody tr[aria-rowindex]').count();
    expect(rendered).toBeLessThan(100); // virtualised: only the rows in view are in the DOM
    await screenshot(page, 'jobs-10000');

    const t1 = Date.now();
    await page.getByLabel('Name').fill('app-17/job-24');
    await page.locator('.filters .count', { hasText: '10 of 10,000 jobs' }).waitFor();
    const filterMs = Date.now() - t1;
    console.log(`jobs page, 10,000 jobs: filter answered after ${filterMs} ms`);
    expect(filterMs).toBeLessThan(500);
    await page.getByLabel('State').selectOption('failing');
    await page.locator('.filters .count', { hasText: '2 of 10,000 jobs' }).waitFor();
    await page.getByLabel('Name').fill('');
    await page.getByLabel('State').selectOption('all');
    await page.locator('.filters .count', { hasText: '10,000 of 10,000 jobs' }).waitFor();

    await page.locator('.scroller').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await page
      .locator('table.jobs tr', { hasText: `${app(APPS - 1)}/${job(PER_APP - 1)}` })
      .waitFor();
    expect(w.consoleErrors).toEqual([]);
    expect(foreignRequests(w, d.url)).toEqual([]);
  });
});
