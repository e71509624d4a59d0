/**
 * The web UI on a phone (390 × 844, the issue "The first hour, tried as a new user would"):
 * no page scrolls sideways, no table spills out of its card, the header spans the page, and
 * the jobs list is readable rows — each job's name and schedule in words whole (not cut to a
 * few characters), its next fire and last outcome on screen.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSchedule } from '../../src/contract/schedule/describe.js';
import {
  expectNoSideScroll,
  expectTablesInside,
  firstHourManifests,
  notifyOnce,
} from './first-hour-fixtures.js';
import {
  launchBrowser,
  login,
  screenshot,
  startUiDaemon,
  VIEWER_ZONE,
  watch,
  type UiDaemon,
  type WatchedPage,
} from './harness.js';

const PHONE = { width: 390, height: 844 };

let d: UiDaemon;
let browser: Browser;
let context: BrowserContext;
let w: WatchedPage;
let page: Page;

beforeAll(async () => {
  d = await startUiDaemon({ manifests: firstHourManifests });
  await notifyOnce(d);
  for (const job of ['shop/flaky', 'shop/report'])
    expect((await d.api('POST', `/api/v1/jobs/${job}/trigger`)).status).toBe(202);
  browser = await launchBrowser();
  context = await browser.newContext({ timezoneId: VIEWER_ZONE, locale: 'en-GB', viewport: PHONE });
  w = await watch(context);
  page = w.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

async function expectPhoneLayout(what: string): Promise<void> {
  expect(await page.evaluate(() => window.innerWidth)).toBe(PHONE.width);
  await expectNoSideScroll(page, what);
  await expectTablesInside(page, what);
  await screenshot(page, `phone-${what}`);
}

describe('the web UI at 390 px', () => {
  it('login: the form fits', async () => {
    await page.goto(`${d.url}/`);
    await page.getByLabel('API token').waitFor();
    await expectPhoneLayout('login');
    await login(page, d.url, d.token);
  });

  it('overview', async () => {
    const next = page.locator('section', { has: page.getByRole('heading', { name: 'Next 24 h' }) });
    await next.locator('tbody tr').first().waitFor();
    await page.locator('figcaption', { hasText: /success: \d+/ }).waitFor();
    await expectPhoneLayout('overview');
  });

  it('jobs: readable rows with the whole name, the schedule in words, next fire and last outcome', async () => {
    await page.goto(`${d.url}/jobs`);
    const rows = page.locator('table.jobs tbody tr[aria-rowindex]');
    await page.locator('.filters .count', { hasText: /^\d+ of \d+ jobs$/ }).waitFor();
    await rows.first().waitFor();
    await expectPhoneLayout('jobs');
    const all = (await d.api('GET', '/api/v1/jobs')).json.jobs as {
      app: string;
      job: string;
      schedules: string[];
      timezone: string;
    }[];
    expect(all.map((j) => `${j.app}/${j.job}`)).toContain('tick/half-minute');
    for (const j of all) {
      const key = `${j.app}/${j.job}`;
      const row = rows.filter({ has: page.getByRole('link', { name: key, exact: true }) });
      await row.scrollIntoViewIfNeeded();
      const cells = await row.evaluate((tr) => {
        const whole = (e: Element | null) =>
          e !== null &&
          e.getBoundingClientRect().width > 0 &&
          e.scrollWidth <= e.clientWidth &&
          e.scrollHeight <= e.clientHeight &&
          e.getBoundingClientRect().right <= window.innerWidth;
        const seen = (e: Element | null) =>
          e !== null &&
          e.getBoundingClientRect().width > 0 &&
          e.getBoundingClientRect().right <= window.innerWidth;
        const name = tr.querySelector('td.name');
        const words = tr.querySelector('td.words');
        return {
          name: name?.textContent,
          nameWhole: whole(name) && whole(name!.querySelector('a')),
          words: words?.textContent,
          wordsWhole: whole(words),
          next: seen(tr.querySelector('td.next time')),
          outcome: seen(tr.querySelector('td.outcome .badge')),
        };
      });
      expect(cells, key).toEqual({
        name: key,
        nameWhole: true,
        words: j.schedules.map((s) => describeSchedule(s, j.timezone)).join('; '),
        wordsWhole: true,
        next: true,
        outcome: true,
      });
    }
    // the seconds schedules, as words
    const words = await rows.locator('td.words').allInnerTexts();
    expect(words).toContain(`Every 30 seconds, UTC`);
    expect(words).toContain(`Every 30 minutes, UTC`);
    expect(words).toContain(`At second 30 of every minute, UTC`);
  });

  it('job: schedule, policy, notify, next fires, timeline and history', async () => {
    for (const job of ['billing/settle', 'shop/flaky', 'tick/watched']) {
      await page.goto(`${d.url}/jobs/${job}`);
      await page.locator('table.next-fires tbody tr').first().waitFor();
      await page.locator('table.runs tbody tr').first().waitFor();
      await expectPhoneLayout(`job-${job.replace('/', '-')}`);
    }
  });

  it('run: facts, attempts and the request headers', async () => {
    const run = (await d.api('GET', '/api/v1/runs?app=shop&job=flaky&limit=1')).json.runs[0];
    await page.goto(`${d.url}/runs/${run.id}`);
    await page.locator('table.headers').waitFor();
    await expectPhoneLayout('run');
  });

  it('notifications', async () => {
    await page.goto(`${d.url}/notifications`);
    await page.locator('main table tbody tr').first().waitFor();
    await expectPhoneLayout('notifications');
    expect(w.consoleErrors).toEqual([]);
  });
});
