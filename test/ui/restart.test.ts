/**
 * A daemon restart under an open page: the session cookie stays valid (it is
 * stateless), the event stream reconnects by itself, the daemon answers its
 * old Last-Event-ID with `reset`, and the page reloads what it shows — a run
 * recorded while the page was cut off appears without a manual reload.
 */
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import {
  launchBrowser,
  login,
  newContext,
  SECRET,
  startUiDaemon,
  watch,
  type UiDaemon,
} from './harness.js';

let d: UiDaemon;
let second: DaemonHandle | undefined;
let browser: Browser;

beforeAll(async () => {
  d = await startUiDaemon();
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await second?.stop(500);
  await d?.sink.close();
});

it('after a restart the page is live again and shows what happened meanwhile', async () => {
  const w = await watch(await newContext(browser));
  const page = w.page;
  await login(page, d.url, d.token);
  await page.goto(`${d.url}/jobs/shop/report`);
  await page.getByText('Live', { exact: true }).waitFor();
  await page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));

  const port = new URL(d.url).port;
  const before = w.requests.length;
  await d.daemon.stop(500);
  await page.getByText('Reconnecting…').waitFor();
  const manifests = readdirSync(d.dir)
    .filter((f) => f.startsWith('manifest-'))
    .map((f) => join(d.dir, f));
  second = await startDaemon({
    manifests,
    dataDir: join(d.dir, 'data'),
    listen: `127.0.0.1:${port}`,
    env: { UI_TEST_SECRET: SECRET },
  });
  // before the page reconnects the reset’s reload shows it; after, the live event does
  const res = await fetch(`${second.url}/api/v1/jobs/shop/report/trigger`, {
    method: 'POST',
    headers: { authorization: `Bearer ${second.token}` },
  });
  const { run } = (await res.json()) as { run: { id: string } };
  await page.getByText('Live', { exact: true }).waitFor({ timeout: 15_000 });
  await page.locator(`tr[data-run="${run.id}"]`).waitFor({ timeout: 5_000 });
  expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
  // the daemon answered the old boot's Last-Event-ID with reset, and the page reloaded its runs
  expect(w.requests.slice(before).some((u) => u.includes('/api/v1/runs?app=shop&job=report'))).toBe(
    true,
  );
  expect(await page.getByLabel('API token').count()).toBe(0);
  // the only console errors are the browser's notes of the refused reconnects
  expect(w.consoleErrors.every((e) => /ERR_CONNECTION_REFUSED|status of 503/.test(e))).toBe(true);
});
