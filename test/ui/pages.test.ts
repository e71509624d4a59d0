/**
 * Every page of the web UI in a real browser (SPEC §13), logged in, over a real
 * daemon with history: what each page shows, no console error, no request to
 * another origin, no secret or signature anywhere in the page, screenshots.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../src/daemon/store/types.js';
import { randomUUID } from 'node:crypto';
import { planEvent } from '../../src/daemon/notify-plan.js';
import { newRun } from '../daemon/store-fixtures.js';
import {
  foreignRequests,
  launchBrowser,
  login,
  newContext,
  screenshot,
  SECRET,
  startUiDaemon,
  STATIC_CREDENTIAL,
  until,
  VIEWER_ZONE,
  watch,
  type UiDaemon,
  type WatchedPage,
} from './harness.js';

let d: UiDaemon;
let browser: Browser;
let context: BrowserContext;
let w: WatchedPage;
let page: Page;
const bodies: string[] = [];

/** Seeds the ledger: missed/skipped rows of the last hours, then real runs through the API. */
async function seed(): Promise<void> {
  const now = Date.now();
  const rows = (['missed', 'skipped', 'success', 'queue_full'] as RunOutcome[]).map((outcome, i) =>
    newRun({
      app: 'shop',
      job: 'flaky',
      phase: 'ended',
      outcome,
      scheduledTime: Math.floor((now - (i + 1) * 3_600_000) / 1_800_000) * 1_800_000,
      endedAt: now - (i + 1) * 3_600_000,
      startedAt: outcome === 'success' ? now - (i + 1) * 3_600_000 - 800 : null,
      error: outcome === 'success' ? null : `seeded ${outcome}`,
    }),
  );
  await d.daemon.store.write(rows.map((run) => ({ kind: 'insert', run })));
  for (const path of [
    'shop/report',
    'shop/report',
    'shop/flaky',
    'billing/reject',
    'billing/settle',
  ])
    expect((await d.api('POST', `/api/v1/jobs/${path}/trigger`)).status).toBe(202);
  await until(
    async () =>
      (await d.api('GET', '/api/v1/runs?phase=ended&limit=100')).json.runs.length >= 9 && true,
    'the seeded runs to end',
  );
}

beforeAll(async () => {
  d = await startUiDaemon();
  await seed();
  browser = await launchBrowser();
  context = await newContext(browser);
  w = await watch(context);
  page = w.page;
  page.on('response', (r) => {
    if (r.url().startsWith(d.url))
      void r.text().then(
        (t) => bodies.push(t),
        () => undefined,
      );
  });
  await login(page, d.url, d.token);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

/** Nothing secret in the DOM or in any response the page received. */
async function expectNoSecrets(p: Page): Promise<void> {
  const html = await p.content();
  for (const text of [html, ...bodies]) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(d.token);
    expect(text).not.toContain(STATIC_CREDENTIAL);
    expect(text).not.toContain('query-credential-77');
    expect(text).not.toMatch(/v1=[0-9a-f]{64}/);
    expect(text).not.toMatch(/t=\d{9,},v1=/);
  }
}

describe('web UI pages', () => {
  it('overview: outcomes over 24 h, attention, running now, next 24 h, no cluster block without HA', async () => {
    await page.goto(`${d.url}/`);
    const outcomes = page.locator('section', {
      has: page.getByRole('heading', { name: 'Outcomes over 24 h' }),
    });
    await expect.poll(() => outcomes.locator('figcaption').innerText()).toMatch(/success: \d+/);
    const caption = await outcomes.locator('figcaption').innerText();
    expect(caption).toMatch(/retries exhausted: 1/);
    expect(caption).toMatch(/missed: 1/);
    const attention = page.locator('section', {
      has: page.getByRole('heading', { name: 'Needs attention' }),
    });
    await expect.poll(() => attention.innerText()).toContain('shop/flaky');
    expect(await attention.innerText()).toContain('billing/reject');
    expect(await attention.innerText()).toContain('last run failed');
    const complete = page.locator('section', {
      has: page.getByRole('heading', { name: 'Completeness per job (24 h)' }),
    });
    await expect.poll(() => complete.innerText()).toMatch(/shop\/flaky\s+\d+(\.\d)?%/);
    const next = page.locator('section', { has: page.getByRole('heading', { name: 'Next 24 h' }) });
    await expect.poll(() => next.innerText()).toContain('shop/flaky');
    expect(await next.innerText()).toContain('your time');
    expect(await page.getByRole('heading', { name: 'Cluster' }).count()).toBe(0);
    await screenshot(page, 'overview');
    await expectNoSecrets(page);
  });

  it('jobs: schedule in words, zone, next fire in both clocks, state, strip; filters by app and state', async () => {
    await page.getByRole('link', { name: 'Jobs' }).click();
    const table = page.locator('table.jobs');
    await table.locator('tbody tr[aria-rowindex]').first().waitFor();
    const headers = await table.locator('thead th').allInnerTexts();
    expect(headers).toEqual([
      'Job',
      'Schedule',
      'Zone',
      'Next fire',
      'State',
      'Last outcome',
      'Last 20 runs',
      'Active',
      'Queued',
    ]);
    const settle = table.locator('tr', { hasText: 'billing/settle' });
    expect(await settle.innerText()).toContain(
      'At 02:30 on days 25 to 31 of the month in March and October, Europe/Berlin',
    );
    expect(await settle.innerText()).toContain('your time');
    const flaky = table.locator('tr', { hasText: 'shop/flaky' });
    expect(await flaky.innerText()).toContain('retries exhausted');
    expect(await flaky.locator('.strip').getAttribute('title')).toMatch(/^last \d+: /);
    await page.getByLabel('App').selectOption('shop');
    await expect.poll(() => page.locator('.filters .count').innerText()).toBe('2 of 6 jobs');
    await page.getByLabel('State').selectOption('failing');
    await expect.poll(() => page.locator('.filters .count').innerText()).toBe('1 of 6 jobs');
    expect(await table.locator('tbody tr[aria-rowindex]').allInnerTexts()).toHaveLength(1);
    await page.getByLabel('App').selectOption('');
    await page.getByLabel('State').selectOption('all');
    await page.getByLabel('Name').fill('sett');
    await expect.poll(() => page.locator('.filters .count').innerText()).toBe('1 of 6 jobs');
    await page.getByLabel('Name').fill('');
    await screenshot(page, 'jobs');
    await expectNoSecrets(page);
  });

  it('job: schedule and policy, next 10 fires with a DST transition marked, timeline, durations, history filter', async () => {
    await page.goto(`${d.url}/jobs/billing/settle`);
    await page.getByRole('heading', { name: 'billing/settle' }).waitFor();
    const next = page.locator('table.next-fires');
    await next.locator('tbody tr').first().waitFor();
    expect(await next.locator('thead th').allInnerTexts()).toEqual([
      'In Europe/Berlin',
      `Your time (${VIEWER_ZONE})`,
    ]);
    const rows = await next.locator('tbody tr:not(.dst)').count();
    expect(rows).toBe(10);
    const dst = await next.locator('tr.dst').allInnerTexts();
    expect(dst.length).toBeGreaterThan(0);
    expect(dst[0]).toMatch(
      /DST: clocks go (forward|back) at .* UTC \(UTC\+0[12]:00 → UTC\+0[12]:00\)/,
    );
    const policy = await page.locator('dl.facts').innerText();
    expect(policy).toContain('Forbid (host scope)');
    expect(policy).toContain('token=hidden');
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await screenshot(page, 'job-settle');

    await page.goto(`${d.url}/jobs/shop/flaky`);
    const history = page.locator('table.runs');
    await history.locator('tbody tr[data-run]').first().waitFor();
    expect(await history.locator('thead th').allInnerTexts()).toEqual([
      'Job',
      'Scheduled',
      'Trigger',
      'Outcome',
      'Attempts',
      'Duration',
    ]);
    const all = await history.locator('tbody tr[data-run]').count();
    expect(all).toBe(5);
    await page.getByLabel('Outcome').selectOption('missed');
    await expect.poll(() => history.locator('tbody tr[data-run]').count()).toBe(1);
    expect(await history.locator('tbody tr[data-run]').innerText()).toContain('missed');
    await page.getByLabel('Outcome').selectOption('');
    await expect.poll(() => history.locator('tbody tr[data-run]').count()).toBe(5);
    const timeline = page.locator('figure', { has: page.locator('svg[aria-label^="Timeline"]') });
    expect(await timeline.locator('.mark-missed').count()).toBe(1);
    expect(await timeline.locator('.mark-skipped').count()).toBe(1);
    expect(await timeline.locator('.mark-queue_full').count()).toBe(1);
    expect(await page.locator('.uplot').count()).toBe(1);
    await screenshot(page, 'job-flaky');
    await expectNoSecrets(page);
  });

  it('run: key, trigger, phase, outcome, error, attempts, headers sent without signature or secret', async () => {
    const { json } = await d.api(
      'GET',
      '/api/v1/runs?app=shop&job=flaky&outcome=retries_exhausted',
    );
    const run = json.runs[0];
    await page.goto(`${d.url}/runs/${run.id}`);
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    const facts = await page.locator('dl.facts').innerText();
    expect(facts).toContain(run.run_key);
    expect(facts).toContain('manual');
    expect(facts).toContain('retries_exhausted');
    expect(facts).toContain('HTTP 503');
    const attempts = page.locator('section', {
      has: page.getByRole('heading', { name: 'Attempts' }),
    });
    expect(await attempts.locator('tbody tr').count()).toBe(2);
    expect(await attempts.innerText()).toContain('503');
    const headers = page.locator('table.headers');
    await headers.waitFor();
    const text = await headers.innerText();
    expect(text).toContain('X-Cron-Run-Key');
    expect(text).toMatch(/X-Cron-Signature\s+\(hidden\)/);
    expect(await page.getByRole('button', { name: 'Replay' }).count()).toBe(1);
    await screenshot(page, 'run');

    const report = (await d.api('GET', '/api/v1/runs?app=shop&job=report&limit=1')).json.runs[0];
    await page.goto(`${d.url}/runs/${report.id}`);
    await page.locator('table.headers').waitFor();
    expect(await page.locator('table.headers').innerText()).toMatch(/Authorization\s+\(hidden\)/);
    await expectNoSecrets(page);
  });

  it('a command job: the job shows its command, the run its output, and no request view is asked for', async () => {
    expect((await d.api('POST', '/api/v1/jobs/ops/backup/trigger')).status).toBe(202);
    const run = await until(async () => {
      const r = (await d.api('GET', '/api/v1/runs?app=ops&job=backup&limit=1')).json.runs[0];
      return r?.phase === 'ended' ? r : null;
    }, 'the command run to end');
    expect(run.outcome).toBe('success');
    await page.goto(`${d.url}/jobs/ops/backup`);
    await page.getByRole('heading', { name: 'ops/backup' }).waitFor();
    const facts = page.locator('dl.facts');
    await facts.waitFor();
    expect(await facts.innerText()).toContain('sh -c echo backup done');
    expect(await facts.innerText()).toContain('TARGET');
    const before = w.requests.length;
    await page.goto(`${d.url}/runs/${run.id}`);
    await page.getByRole('heading', { name: 'Command output' }).waitFor();
    expect(await page.locator('pre.output').innerText()).toContain('backup done');
    await screenshot(page, 'run-command');
    expect(w.requests.slice(before).filter((u) => u.endsWith('/request'))).toEqual([]);
  });

  it('notifications: event with its count, job, notifier, delivery status and the message', async () => {
    const run = (await d.api('GET', '/api/v1/runs?app=billing&job=reject&limit=1')).json.runs[0];
    const record = {
      ...newRun({
        app: 'billing',
        job: 'reject',
        phase: 'ended',
        outcome: 'app_rejected',
        error: 'HTTP 400',
      }),
      id: run.id,
      seq: 0,
    };
    await d.daemon.store.recordNotifications('billing', 'reject', () => ({
      groups: [],
      notifications: planEvent(
        'failed',
        record,
        Date.now(),
        [
          {
            notifier: 'chat',
            type: 'webhook',
            on: ['failed'],
            repeatMs: 1000,
            slowAfterSeconds: 1,
          },
        ],
        [],
        randomUUID,
      ).notifications.map((n) => ({
        ...n,
        count: 3,
        status: 'delivered' as const,
        attempts: 2,
        lastStatus: 200,
        nextAttemptAt: null,
        endedAt: Date.now(),
      })),
    }));
    await page.goto(`${d.url}/notifications`);
    await page.locator('table.runs tbody tr').first().waitFor();
    const text = await page.locator('table.runs').innerText();
    expect(text).toMatch(/failed ×3/);
    expect(text).toContain('billing/reject');
    expect(text).toMatch(/chat \(webhook\)/);
    expect(text).toContain('delivered');
    expect(text).toContain('cronix: billing/reject failed');
    await screenshot(page, 'notifications');
    await expectNoSecrets(page);

    // live: a new notification appears on top, then its delivery updates the row, from the
    // event stream alone (no reload of the list). The stream is connected first, and the one
    // reload of a list loaded before it connected is over.
    await page.getByText('Live', { exact: true }).waitFor();
    await page.waitForTimeout(300);
    const listed = () => w.requests.filter((u) => u.includes('/api/v1/notifications')).length;
    const before = listed();
    const [fresh] = planEvent(
      'failed',
      { ...record, id: randomUUID() },
      Date.now(),
      [{ notifier: 'pager', type: 'webhook', on: ['failed'], repeatMs: 1000, slowAfterSeconds: 1 }],
      [],
      randomUUID,
    ).notifications;
    d.events.emit('notification', { ...fresh!, seq: 0 });
    const row = page.locator('table.runs tbody tr').first();
    await row.filter({ hasText: 'pager (webhook)' }).filter({ hasText: 'pending' }).waitFor();
    d.events.emit('notification', {
      ...fresh!,
      seq: 0,
      status: 'delivered',
      attempts: 1,
      lastStatus: 200,
      endedAt: Date.now(),
    });
    await row.filter({ hasText: 'pager (webhook)' }).filter({ hasText: 'delivered' }).waitFor();
    expect(await page.locator('table.runs tbody tr').count()).toBe(2);
    expect(listed()).toBe(before);
  });

  it('no console error and no request to another origin on any page', async () => {
    expect(w.consoleErrors).toEqual([]);
    expect(foreignRequests(w, d.url)).toEqual([]);
    expect(w.requests.length).toBeGreaterThan(10);
  });
});
