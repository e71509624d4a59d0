/**
 * The web UI's actions in a real browser (SPEC §13): `Run now` by keyboard, a
 * delayed run, `Cancel` (confirmed first), `Pause` / `Resume`, `Replay`, each
 * with its effect in the UI and in the API; and a live update arriving
 * without a reload.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  foreignRequests,
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

const runsOf = async (job: string) =>
  (await d.api('GET', `/api/v1/runs?app=shop&job=${job}`)).json.runs as {
    id: string;
    trigger: string;
    phase: string;
    outcome: string | null;
    due_at: string | null;
  }[];

describe('web UI actions', () => {
  it('Run now works from the keyboard: Tab to it, Enter; the run shows at once and is in the API', async () => {
    await page.goto(`${d.url}/jobs/shop/report`);
    await page.getByRole('button', { name: 'Run now' }).waitFor();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.textContent === 'Run now');
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /Started run/ })
      .waitFor();
    const runs = await until(async () => {
      const r = await runsOf('report');
      return r.length === 1 && r[0]!.outcome === 'success' && r;
    }, 'the run to succeed');
    expect(runs[0]!.trigger).toBe('manual');
    const row = page.locator(`table.runs tr[data-run="${runs[0]!.id}"]`);
    await expect.poll(() => row.innerText()).toContain('success');
  });

  it('a delayed run: Run later schedules it; Cancel asks first, and Keep it keeps it', async () => {
    await page.getByLabel('Delay (minutes)').fill('5');
    await page.getByRole('button', { name: 'Run later' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Scheduled run/ })
      .waitFor();
    const delayed = (await runsOf('report')).find((r) => r.phase === 'queued');
    expect(delayed).toBeDefined();
    const due = Date.parse(delayed!.due_at!);
    expect(Math.abs(due - (Date.now() + 300_000))).toBeLessThan(15_000);
    await expect
      .poll(() => page.locator(`tr[data-run="${delayed!.id}"]`).innerText())
      .toContain('delayed');

    // the scheduled time opens the run (the job's name opens the job)
    await page.locator(`tr[data-run="${delayed!.id}"] a[href^="/runs/"]`).click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain('Cancel this run?');
    await screenshot(page, 'run-cancel-confirm');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await d.api('GET', `/api/v1/runs/${delayed!.id}`)).json.phase).toBe('queued');

    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await dialog.getByRole('button', { name: 'Cancel the run' }).click();
    await page.getByRole('status').filter({ hasText: 'Cancelled' }).waitFor();
    await expect.poll(() => page.locator('h1 .badge').innerText()).toBe('stopped');
    const after = (await d.api('GET', `/api/v1/runs/${delayed!.id}`)).json;
    expect(after.outcome).toBe('stopped');
    expect(await page.getByRole('button', { name: 'Replay' }).count()).toBe(1);
  });

  it('Cancel aborts a running run: the page says stopped, and so does the API', async () => {
    const res = await d.api('POST', '/api/v1/jobs/billing/slow/trigger');
    const id = res.json.run.id as string;
    await page.goto(`${d.url}/runs/${id}`);
    await expect.poll(() => page.locator('h1 .badge').innerText()).toBe('running');
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel the run' }).click();
    await expect.poll(() => page.locator('h1 .badge').innerText()).toBe('stopped');
    const run = (await d.api('GET', `/api/v1/runs/${id}`)).json;
    expect(run.outcome).toBe('stopped');
    expect(run.error).toMatch(/cancel/);
    expect(Date.parse(run.ended_at) - Date.parse(run.started_at)).toBeLessThan(2_500);
  });

  it('Replay makes a new run of an ended one, linked at once, trigger replay in the API', async () => {
    const [ended] = (await runsOf('report')).filter((r) => r.outcome === 'success');
    await page.goto(`${d.url}/runs/${ended!.id}`);
    await page.getByRole('button', { name: 'Replay' }).click();
    const notice = page.getByRole('status').filter({ hasText: /Replayed as run/ });
    await notice.waitFor();
    const id = (await notice.getByRole('link').innerText()).replace(/^run /, '');
    const replay = (await d.api('GET', `/api/v1/runs/${id}`)).json;
    expect(replay.trigger).toBe('replay');
    await notice.getByRole('link').click();
    await expect.poll(() => page.locator('dl.facts').innerText()).toContain('replay');
  });

  it('Pause asks first, then the job shows paused (and the API says so); Resume undoes it', async () => {
    await page.goto(`${d.url}/jobs/shop/flaky`);
    await page.getByRole('button', { name: 'Pause' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Pause the job' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    expect(await page.locator('h1').innerText()).toContain('paused');
    expect((await d.api('GET', '/api/v1/jobs/shop/flaky')).json.paused).toBe(true);
    await screenshot(page, 'job-paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    expect(await page.locator('h1').innerText()).not.toContain('paused');
    expect((await d.api('GET', '/api/v1/jobs/shop/flaky')).json.paused).toBe(false);
  });

  it('a run started elsewhere appears without reload within 1 s, and its end follows', async () => {
    await page.goto(`${d.url}/jobs/billing/slow`);
    await page.getByRole('heading', { name: 'Run history' }).waitFor();
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    await page.waitForTimeout(300); // the page's own loads are done
    await page.getByText('Live', { exact: true }).waitFor(); // and the stream is connected
    const t0 = Date.now();
    const res = await d.api('POST', '/api/v1/jobs/billing/slow/trigger');
    expect(res.status).toBe(202);
    const row = page.locator(`tr[data-run="${res.json.run.id}"]`);
    await row.waitFor({ timeout: 1_000 });
    expect(Date.now() - t0).toBeLessThan(1_000);
    // it shows in flight: `planned` until its first attempt's row is written, then `running`
    expect(await row.innerText()).toMatch(/\t(planned|running)\t/);
    await expect.poll(() => row.innerText(), { timeout: 8_000 }).toContain('running');
    await expect.poll(() => row.innerText(), { timeout: 8_000 }).toContain('success');
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
    await screenshot(page, 'job-live');
  });

  it('the overview shows a run in Running now while it runs, live, and drops it when it ends', async () => {
    await page.goto(`${d.url}/`);
    const running = page.locator('section', {
      has: page.getByRole('heading', { name: 'Running now' }),
    });
    await running.getByText('Nothing is running.').waitFor();
    // the stream is connected: a run started before it would show only after a reload
    await page.getByText('Live', { exact: true }).waitFor();
    const res = await d.api('POST', '/api/v1/jobs/billing/slow/trigger');
    const row = running.locator(`tr[data-run="${res.json.run.id}"]`);
    // no page polls: the row can only come from the live stream (generous under a loaded CI)
    await row.waitFor({ timeout: 10_000 });
    expect(await row.innerText()).toContain('running');
    // its first attempt is in flight, and the row says so (never "0 attempts" while it runs)
    expect(await row.locator('td[data-label="Attempts"]').innerText()).toBe('1');
    await screenshot(page, 'overview-running');
    await running.getByText('Nothing is running.').waitFor({ timeout: 8_000 });
  });

  it('a page loaded before the stream connects loads again once it does: nothing in between is missed', async () => {
    // hold the event stream back while the overview loads and a run starts
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/api/v1/events', async (route) => {
      await held;
      await route.continue();
    });
    try {
      await page.goto(`${d.url}/`);
      const running = page.locator('section', {
        has: page.getByRole('heading', { name: 'Running now' }),
      });
      await running.getByText('Nothing is running.').waitFor();
      const res = await d.api('POST', '/api/v1/jobs/billing/slow/trigger');
      expect(res.status).toBe(202);
      // its start came through no stream; the page shows it once the stream connects
      release();
      await page.getByText('Live', { exact: true }).waitFor();
      const row = running.locator(`tr[data-run="${res.json.run.id}"]`);
      await row.waitFor({ timeout: 2_000 });
      expect(await row.innerText()).toContain('running');
      await running.getByText('Nothing is running.').waitFor({ timeout: 8_000 });
    } finally {
      release();
      await page.unroute('**/api/v1/events');
    }
  });

  it('no console error and no request to another origin', () => {
    expect(w.consoleErrors).toEqual([]);
    expect(foreignRequests(w, d.url)).toEqual([]);
  });
});
