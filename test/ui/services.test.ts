/**
 * The Services page in a real browser (SPEC §13, §17): the instances with state, pid, uptime,
 * restarts and last exit; the live output of one instance; `Restart` and `Stop` (confirmed
 * first) and `Start`, each with its effect in the page and in the API; no console errors.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const WORKER =
  "console.log('hello from ' + process.env.CRONIX_INSTANCE); setInterval(() => console.log('tick ' + process.env.CRONIX_INSTANCE), 300);";

let d: UiDaemon;
let browser: Browser;
let w: WatchedPage;
let page: Page;

beforeAll(async () => {
  d = await startUiDaemon({
    manifests: () => [
      {
        version: 1,
        app: 'shop',
        services: {
          worker: {
            argv: [process.execPath, '-e', WORKER],
            instances: 2,
            graceful_stop_seconds: 1,
          },
        },
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON, read loosely
const states = async (): Promise<any[]> =>
  (await d.api('GET', '/api/v1/services/shop/worker')).json.instance_states;

describe('the Services page', () => {
  it('lists the instances, shows one instance’s live output, restarts, stops and starts', async () => {
    await until(
      async () => (await states()).every((i) => i.state === 'running'),
      'running',
      20_000,
    );
    await page.getByRole('link', { name: 'Services' }).click();
    await page.getByRole('heading', { name: 'shop/worker' }).waitFor();
    const rows = page.locator('table tbody tr');
    await until(async () => (await rows.count()) === 2, 'two rows');
    for (const h of ['Instance', 'State', 'PID', 'Uptime', 'Restarts', 'Last exit', 'Output'])
      await expect(page.getByRole('columnheader', { name: h }).count()).resolves.toBe(1);
    const pid0 = String((await states())[0].pid);
    await until(async () => (await rows.nth(0).textContent())?.includes(pid0), 'pid shown');
    expect(await rows.nth(0).textContent()).toContain('running');

    await page.getByRole('button', { name: 'Output of instance 1' }).click();
    const output = page.getByRole('region', { name: /Output of shop\/worker instance 1/ });
    await until(async () => (await output.textContent())?.includes('hello from 1'), 'output');
    await until(async () => (await output.textContent())?.includes('tick 1'), 'live output');

    // Restart: confirmed first, then one instance at a time; the page says so
    await page.getByRole('button', { name: 'Restart' }).first().click();
    await page.getByRole('dialog').getByRole('button', { name: 'Restart' }).click();
    await page.getByText('instance 0 restarted, instance 1 restarted').waitFor({ timeout: 20_000 });
    const after = await states();
    expect(after.map((i) => i.restarts)).toEqual([1, 1]);
    expect(String(after[0].pid)).not.toBe(pid0);
    await until(
      async () => (await rows.nth(0).textContent())?.includes('stopped: restarted by an operator'),
      'last exit shown',
    );

    // Stop: every instance stops and says so; Start brings them back
    await page.getByRole('button', { name: 'Stop' }).first().click();
    await page.getByRole('dialog').getByRole('button', { name: 'Stop' }).click();
    await page.getByText('instance 0 stopped, instance 1 stopped').waitFor({ timeout: 20_000 });
    expect((await states()).map((i) => i.state)).toEqual(['stopped', 'stopped']);
    await until(
      async () => (await rows.nth(1).textContent())?.includes('stopped'),
      'stopped shown',
    );
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByText('instance 0 started, instance 1 started').waitFor({ timeout: 20_000 });
    expect((await states()).map((i) => i.state)).toEqual(['running', 'running']);
    await screenshot(page, 'services');
    expect(w.consoleErrors.join('\n')).toBe('');
  }, 90_000);
});
