/**
 * Freeze through the CLI, the API and a real browser (SPEC §16): `cronix freeze --app shop`
 * (recorded as `default`, the name of the token file's token), then a burst of 50 concurrent manual triggers over the API — every one
 * answered `skipped` with the freeze's reason and who, nothing reaching the sink; the UI's banner
 * shows the scope, the reason and who on every page; a pause with a reason shows its note on
 * the job page; `unfreeze` over the API takes the banner away and triggers start again. Bad
 * input: 400 naming the field, 404 for a scope that is not frozen, exit 2 for CLI usage.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cronixAsync } from '../helpers/cli.js';
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

const cli = (args: string[]) =>
  cronixAsync(args, { env: { ...process.env, CRONIX_URL: d.url, CRONIX_TOKEN: d.token } });

it('freeze by cli: a burst of triggers starts nothing, the banner says why and who; unfreeze resumes', async () => {
  const frozen = await cli([
    'freeze',
    '--app',
    'shop',
    '--reason',
    'duplicates suspected',
    '-o',
    'json',
  ]);
  expect(frozen.status, frozen.stderr).toBe(0);
  expect(JSON.parse(frozen.stdout).freeze).toMatchObject({
    app: 'shop',
    job: null,
    reason: 'duplicates suspected',
    by: 'default', // the token file's token is the admin token named "default"
    until: null,
  });

  const before = d.sink.requests.length;
  const burst = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      d.api('POST', `/api/v1/jobs/shop/${i % 2 ? 'report' : 'flaky'}/trigger`),
    ),
  );
  for (const r of burst) {
    expect(r.status).toBe(202);
    expect(r.json.admission).toBe('skipped');
    expect(r.json.run.error).toBe('frozen: duplicates suspected (by default)');
  }
  // another app is not frozen
  const other = await d.api('POST', '/api/v1/jobs/billing/settle/trigger');
  expect(other.json.admission).toBe('started');

  const list = await d.api('GET', '/api/v1/freezes');
  expect(list.json.freezes).toHaveLength(1);
  const shown = await cli(['freezes']);
  expect(shown.stdout).toMatch(/shop\/\*\s+duplicates suspected\s+default/);

  // the banner, on every page
  await page.goto(`${d.url}/jobs/shop/report`);
  const banner = page.getByRole('status', { name: 'Frozen' });
  await banner.getByText('Frozen: App shop').waitFor({ timeout: 10_000 });
  expect(await banner.textContent()).toContain('duplicates suspected (by default, since');
  await screenshot(page, 'freeze-banner');

  // pause takes the same note
  const paused = await d.api('POST', '/api/v1/jobs/billing/settle/pause', {
    reason: 'month-end migration',
  });
  expect(paused.status).toBe(200);
  const job = await d.api('GET', '/api/v1/jobs/billing/settle');
  expect(job.json.pause_note).toMatchObject({ reason: 'month-end migration', by: 'default' });
  await page.goto(`${d.url}/jobs/billing/settle`);
  await page.getByText('Paused by default').waitFor({ timeout: 10_000 });
  expect(await page.locator('.pause-note').textContent()).toContain('month-end migration');

  // nothing of shop reached the sink while frozen
  expect(d.sink.requests.slice(before).filter((r) => /\/(ok\/report|fail)/.test(r.url))).toEqual(
    [],
  );

  const unfrozen = await d.api('POST', '/api/v1/freezes/unfreeze', { app: 'shop' });
  expect(unfrozen.status).toBe(200);
  expect(unfrozen.json).toMatchObject({
    by: 'default',
    unfrozen: { reason: 'duplicates suspected' },
  });
  await banner.waitFor({ state: 'detached', timeout: 10_000 });
  const after = await d.api('POST', '/api/v1/jobs/shop/report/trigger');
  expect(after.json.admission).toBe('started');
  expect(w.consoleErrors).toEqual([]);
});

it('bad input: 400 naming the field, 404 when not frozen, CLI usage exit 2', async () => {
  const noReason = await d.api('POST', '/api/v1/freezes', { app: 'shop' });
  expect(noReason.status).toBe(400);
  expect(noReason.json.error).toMatchObject({ code: 'invalid_request', path: 'reason' });
  const badUntil = await d.api('POST', '/api/v1/freezes', { reason: 'x', until: 'tomorrow' });
  expect(badUntil.status).toBe(400);
  expect(badUntil.json.error.path).toBe('until');
  const past = await d.api('POST', '/api/v1/freezes', {
    reason: 'x',
    until: '2001-01-01T00:00:00Z',
  });
  expect(past.status).toBe(400);
  const unknown = await d.api('POST', '/api/v1/freezes', { reason: 'x', scope: 'all' });
  expect(unknown.json.error.path).toBe('scope');
  const noJob = await d.api('POST', '/api/v1/freezes', { app: 'shop', job: 'nope', reason: 'x' });
  expect(noJob.status).toBe(404);
  const notFrozen = await d.api('POST', '/api/v1/freezes/unfreeze', { app: 'billing' });
  expect(notFrozen.status).toBe(404);
  expect(notFrozen.json.error.message).toBe('app billing is not frozen');
  const usage = await cli(['freeze', '--app', 'shop']);
  expect(usage.status).toBe(2);
  expect(usage.stderr).toContain('--reason is required');
  const doc = await d.api('GET', '/openapi.json');
  expect(Object.keys(doc.json.paths)).toEqual(
    expect.arrayContaining(['/api/v1/freezes', '/api/v1/freezes/unfreeze']),
  );
});
