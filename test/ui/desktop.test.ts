/**
 * The web UI at 1400 px (the issue "The first hour, tried as a new user would"): nothing in
 * the jobs list is clipped or cut with "…" while there is room, the list's box is as tall as
 * its rows, every link says what it opens, the job page shows its notify settings, the
 * schedule words read the seconds field, and every instant on every page is written in the
 * one format of docs/ui.md.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectOneDateFormat,
  firstHourManifests,
  INSTANT,
  notifyOnce,
  renderedText,
} from './first-hour-fixtures.js';
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

beforeAll(async () => {
  d = await startUiDaemon({ manifests: firstHourManifests });
  await notifyOnce(d);
  for (const job of ['shop/flaky', 'shop/report', 'billing/reject', 'billing/settle'])
    expect((await d.api('POST', `/api/v1/jobs/${job}/trigger`)).status).toBe(202);
  browser = await launchBrowser();
  w = await watch(await newContext(browser));
  page = w.page;
  await login(page, d.url, d.token);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

/** Opens the jobs page with every row drawn and `shop/flaky` retries exhausted. */
async function jobsPage(): Promise<void> {
  await page.goto(`${d.url}/jobs`);
  await page.locator('.filters .count', { hasText: /^11 of 11 jobs$/ }).waitFor();
  await page
    .locator('table.jobs tr', { hasText: 'shop/flaky' })
    .filter({ hasText: 'retries exhausted' })
    .waitFor();
}

/** Each page of the UI, opened and loaded. */
const PAGES: [string, () => Promise<void>][] = [
  [
    'overview',
    async () => {
      await page.goto(`${d.url}/`);
      await page.locator('figcaption', { hasText: /success: \d+/ }).waitFor();
      const next = page.locator('section', {
        has: page.getByRole('heading', { name: 'Next 24 h' }),
      });
      await next.locator('tbody tr').first().waitFor();
    },
  ],
  ['jobs', jobsPage],
  [
    'job',
    async () => {
      await page.goto(`${d.url}/jobs/shop/flaky`);
      await page.locator('table.runs tbody tr[data-run]').first().waitFor();
      await page.locator('table.next-fires tbody tr').first().waitFor();
    },
  ],
  [
    'job with a DST transition',
    async () => {
      await page.goto(`${d.url}/jobs/billing/settle`);
      await page.locator('table.next-fires tr.dst').first().waitFor();
      await page.locator('table.runs tbody tr[data-run]').first().waitFor();
    },
  ],
  [
    'run',
    async () => {
      const run = (await d.api('GET', '/api/v1/runs?app=shop&job=flaky&limit=1')).json.runs[0];
      await page.goto(`${d.url}/runs/${run.id}`);
      await page.locator('table.headers').waitFor();
    },
  ],
  [
    'notifications',
    async () => {
      await page.goto(`${d.url}/notifications`);
      await page.locator('main table tbody tr').first().waitFor();
    },
  ],
];

describe('the web UI at 1400 px', () => {
  it('jobs: no cell is clipped — the "retries exhausted" badge whole, names and words not cut with "…"', async () => {
    await jobsPage();
    const clipped = await page.locator('table.jobs').evaluate((table) => {
      const out: string[] = [];
      for (const td of table.querySelectorAll('tbody tr[aria-rowindex] td')) {
        const row = td.closest('tr')!.querySelector('td.name')?.textContent;
        if (td.scrollWidth > td.clientWidth) out.push(`${row}: ${td.className} cell`);
        for (const inner of td.querySelectorAll('a, .badge')) {
          const r = inner.getBoundingClientRect();
          const c = td.getBoundingClientRect();
          if (inner.scrollWidth > inner.clientWidth || r.right > c.right || r.left < c.left)
            out.push(`${row}: ${inner.textContent}`);
        }
        if (getComputedStyle(td).textOverflow === 'ellipsis' && td.scrollWidth > td.clientWidth)
          out.push(`${row}: ${td.className} ellipsed`);
      }
      return out;
    });
    expect(clipped).toEqual([]);
    const badge = page
      .locator('table.jobs tr', { hasText: 'shop/flaky' })
      .locator('.badge', { hasText: 'retries exhausted' });
    expect(await badge.evaluate((b) => b.scrollWidth <= b.clientWidth)).toBe(true);
    const name = page.getByRole('link', {
      name: 'tick/nightly-ledger-reconciliation-for-every-region',
    });
    expect(await name.evaluate((a) => a.scrollWidth <= a.clientWidth)).toBe(true);
    await screenshot(page, 'desktop-jobs');
  });

  it('jobs: the list box is as tall as its rows, not a fixed box left mostly blank', async () => {
    await jobsPage();
    const { box, table } = await page.evaluate(() => ({
      box: document.querySelector('.scroller')!.getBoundingClientRect().height,
      table: document.querySelector('table.jobs')!.getBoundingClientRect().height,
    }));
    expect(box).toBeLessThanOrEqual(table + 2);
  });

  it('every link says what it opens: a job name opens the job, a run link is labelled as the run', async () => {
    const wrong: string[] = [];
    for (const [what, open] of PAGES) {
      await open();
      const links = await page
        .locator('main a[href]')
        .evaluateAll((as) =>
          as.map((a) => ({ text: a.textContent!.trim(), href: a.getAttribute('href')! })),
        );
      expect(links.length, what).toBeGreaterThan(0);
      for (const { text, href } of links) {
        const isJobName = /^[a-z][a-z0-9-]*\/[a-z][a-z0-9-]*$/.test(text);
        if (isJobName && href !== `/jobs/${text}`) wrong.push(`${what}: "${text}" → ${href}`);
        else if (href.startsWith('/runs/') && !/^[Rr]un\b/.test(text) && !INSTANT.test(text))
          wrong.push(`${what}: run link "${text}"`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the job page shows its notify settings: notifier, events, slow after, repeat', async () => {
    await page.goto(`${d.url}/jobs/tick/watched`);
    const facts = page.locator('dl.facts');
    await facts.waitFor();
    const notify = facts.locator('dt', { hasText: 'Notify' });
    expect(await notify.count()).toBe(1);
    const text = await facts.locator('dt:has-text("Notify") + dd').innerText();
    expect(text).toContain('chat (webhook)');
    expect(text).toMatch(/failed.*slow/);
    expect(text).toContain('slow after 120 s');
    expect(text).toContain('900 s');
    // a job without notify says so
    await page.goto(`${d.url}/jobs/shop/report`);
    await facts.waitFor();
    expect(await facts.locator('dt:has-text("Notify") + dd').innerText()).toMatch(/^none/);
  });

  it('schedules with seconds read right on the job page', async () => {
    for (const [job, words] of [
      ['half-minute', 'Every 30 seconds, UTC'],
      ['half-hour', 'Every 30 minutes, UTC'],
      ['second-thirty', 'At second 30 of every minute, UTC'],
    ]) {
      await page.goto(`${d.url}/jobs/tick/${job}`);
      await page.locator('.schedules strong').waitFor();
      expect(await page.locator('.schedules strong').innerText()).toBe(words);
    }
  });

  it('every instant on every page is written one way: 2026-11-26 09:16:51 UTC+01:00', async () => {
    for (const [what, open] of PAGES) {
      await open();
      const text = await renderedText(page);
      expect(text, what).toMatch(INSTANT);
      expectOneDateFormat(text, what);
    }
    // the result of a delayed run names its time the same way
    await page.goto(`${d.url}/jobs/shop/report`);
    await page.getByRole('button', { name: 'Run later' }).click();
    const notice = page.getByRole('status').filter({ hasText: /^Scheduled run/ });
    await notice.waitFor();
    expect(await notice.innerText()).toMatch(INSTANT);
    expectOneDateFormat(await renderedText(page), 'job after Run later');
    expect(w.consoleErrors).toEqual([]);
  });
});
