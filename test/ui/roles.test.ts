/**
 * Who sees which actions in the web UI (SPEC §13, §18), in a real browser against a real
 * `cronix serve` process whose tokens are made by the real `cronix tokens create`: a viewer sees
 * no action on the job, run, dead-letters and services pages — no Run now / Run later / Pause,
 * no backfill form, no Replay or Cancel, no dead-letter Replay or Dismiss, no service Start /
 * Restart / Stop nor output — and a muted line says why; an operator limited to app `shop` sees
 * them on shop's pages and not on billing's; an admin sees them everywhere. No page asks the API
 * for something it would refuse (no 403, no console error).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cronixAsync } from '../helpers/cli.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { launchBrowser, login, newContext, screenshot, until, watch } from './harness.js';

let sink: Sink;
let served: Served;
let browser: Browser;
const tokens: Record<string, string> = {};
/** An ended run of shop/flaky and one of billing/settle: both dead letters. */
const runs: Record<string, string> = {};

const WORKER = 'setInterval(() => console.log("tick"), 500);';

function manifests(dir: string): string[] {
  const auth = { secret_refs: ['env:CRON_SECRET'] };
  const failing = {
    schedule: '0 0 1 1 *',
    request: { url: `${sink.url}/fail` },
    policy: { retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 } },
    auth,
  };
  const docs = [
    {
      version: 1,
      app: 'shop',
      jobs: [
        { name: 'report', schedule: '0 0 1 1 *', request: { url: `${sink.url}/ok` }, auth },
        { name: 'flaky', ...failing },
      ],
      services: { worker: { argv: [process.execPath, '-e', WORKER], graceful_stop_seconds: 1 } },
    },
    {
      version: 1,
      app: 'billing',
      jobs: [{ name: 'settle', ...failing }],
      services: { ledger: { argv: [process.execPath, '-e', WORKER], graceful_stop_seconds: 1 } },
    },
  ];
  return docs.map((m, i) => {
    const file = join(dir, `m-${i}.json`);
    writeFileSync(file, JSON.stringify(m));
    return file;
  });
}

async function createToken(name: string, args: string[]): Promise<string> {
  const r = await cronixAsync(
    ['tokens', 'create', name, ...args, '-o', 'json', '--url', served.url],
    {
      env: { PATH: process.env['PATH'] ?? '', CRONIX_TOKEN: served.token },
    },
  );
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { token: string }).token;
}

beforeAll(async () => {
  sink = await startSink((_, req) => ({ status: req.url.startsWith('/fail') ? 503 : 200 }));
  const dir = mkdtempSync(join(tmpdir(), 'cronix-ui-roles-'));
  served = await spawnServe(dir, 0, { manifests: manifests(dir) });
  tokens['viewer'] = await createToken('wall-screen', ['--role', 'viewer']);
  tokens['operator'] = await createToken('shop-oncall', ['--role', 'operator', '--app', 'shop']);
  tokens['admin'] = await createToken('platform', ['--role', 'admin']);
  for (const [app, job] of [
    ['shop', 'flaky'],
    ['billing', 'settle'],
  ] as const) {
    const t = await api(served, 'POST', `/api/v1/jobs/${app}/${job}/trigger`);
    expect(t.status).toBe(202);
    const id = (t.json['run'] as { id: string }).id;
    await until(
      async () => (await api(served, 'GET', `/api/v1/runs/${id}`)).json['phase'] === 'ended',
      `${app}/${job} to end`,
      20_000,
    );
    runs[app] = id;
  }
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  // SIGTERM: the daemon stops its services' processes before it exits
  served?.child.kill('SIGTERM');
  await served?.exited;
  await sink?.close();
});

/** A signed-in page of `who`, recording console errors and refused requests. */
async function signedIn(who: string): Promise<{ page: Page; problems: () => string[] }> {
  const w = await watch(await newContext(browser));
  const refused: string[] = [];
  w.page.on('response', (r) => {
    if (r.status() === 401 || r.status() === 403) refused.push(`${r.status()} ${r.url()}`);
  });
  await login(w.page, served.url, tokens[who] as string);
  return { page: w.page, problems: () => [...w.consoleErrors, ...refused] };
}

const button = (page: Page, name: string): Promise<number> =>
  page.getByRole('button', { name, exact: true }).count();

/** Opens the job page and waits until its detail (and so its actions, if any) is shown. */
async function jobPage(page: Page, app: string, job: string): Promise<void> {
  await page.goto(`${served.url}/jobs/${app}/${job}`);
  await page.getByRole('heading', { name: 'Policy' }).waitFor();
}

async function runPage(page: Page, id: string): Promise<void> {
  await page.goto(`${served.url}/runs/${id}`);
  await page.getByRole('button', { name: 'All runs of this job' }).waitFor();
}

async function deadLetters(page: Page): Promise<void> {
  await page.goto(`${served.url}/dead-letters`);
  await until(async () => (await page.locator('tr[data-run]').count()) === 2, 'two dead letters');
}

async function services(page: Page): Promise<void> {
  await page.goto(`${served.url}/services`);
  await page.getByRole('heading', { name: 'shop/worker' }).waitFor();
  await page.getByRole('heading', { name: 'billing/ledger' }).waitFor();
  await until(
    async () => (await page.locator('section.card tbody tr').count()) === 2,
    'an instance row per service',
  );
}

describe('a viewer', () => {
  it('sees no action on the job, run, dead-letters and services pages, and why', async () => {
    const { page, problems } = await signedIn('viewer');
    expect(await page.locator('header .who').innerText()).toContain('wall-screen (viewer)');

    for (const [app, job] of [
      ['shop', 'report'],
      ['billing', 'settle'],
    ]) {
      await jobPage(page, app!, job!);
      await page.getByText('Read-only: signed in as viewer').waitFor();
      for (const name of ['Run now', 'Run later', 'Pause', 'Resume', 'Dry run', 'Start backfill'])
        expect(await button(page, name), `${name} on ${app}/${job}`).toBe(0);
      expect(await page.locator('.backfill-form').count()).toBe(0);
      expect(await page.getByRole('heading', { name: 'Backfill' }).count()).toBe(0);
    }
    await screenshot(page, 'roles-viewer-job');

    await runPage(page, runs['shop'] as string);
    await page.getByText('Read-only: signed in as viewer').waitFor();
    expect(await button(page, 'Replay')).toBe(0);
    expect(await button(page, 'Cancel')).toBe(0);

    await deadLetters(page);
    await page.getByText('Read-only: signed in as viewer').waitFor();
    expect(await button(page, 'Replay')).toBe(0);
    expect(await button(page, 'Dismiss')).toBe(0);
    expect(await page.getByLabel('Note for a dismissal').count()).toBe(0);

    await services(page);
    expect(await page.getByText('Read-only: signed in as viewer').count()).toBe(2);
    for (const name of ['Start', 'Restart', 'Stop']) expect(await button(page, name), name).toBe(0);
    expect(await page.getByRole('button', { name: /Output of instance/ }).count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: 'Output' }).count()).toBe(0);
    await screenshot(page, 'roles-viewer-services');

    expect(problems()).toEqual([]);
  }, 60_000);
});

describe('an operator limited to shop', () => {
  it('sees the actions on shop’s pages, not on billing’s', async () => {
    const { page, problems } = await signedIn('operator');
    expect(await page.locator('header .who').innerText()).toContain('shop-oncall (operator: shop)');

    await jobPage(page, 'shop', 'report');
    await page.getByRole('button', { name: 'Run now' }).waitFor();
    for (const name of ['Run later', 'Pause', 'Dry run', 'Start backfill'])
      expect(await button(page, name), name).toBe(1);
    expect(await page.locator('.backfill-form').count()).toBe(1);
    expect(await page.getByText(/Read-only/).count()).toBe(0);

    await jobPage(page, 'billing', 'settle');
    await page.getByText('Read-only here: this session acts on app shop only').waitFor();
    for (const name of ['Run now', 'Run later', 'Pause', 'Dry run', 'Start backfill'])
      expect(await button(page, name), `${name} on billing`).toBe(0);
    expect(await page.locator('.backfill-form').count()).toBe(0);
    await screenshot(page, 'roles-operator-other-app');

    await runPage(page, runs['shop'] as string);
    await page.getByRole('button', { name: 'Replay' }).waitFor();
    await runPage(page, runs['billing'] as string);
    await page.getByText('Read-only here: this session acts on app shop only').waitFor();
    expect(await button(page, 'Replay')).toBe(0);

    // a dismissal per row of shop; no bulk replay over billing's dead letters too
    await deadLetters(page);
    expect(
      await page
        .locator(`tr[data-run="${runs['shop']}"]`)
        .getByRole('button', { name: 'Dismiss' })
        .count(),
    ).toBe(1);
    expect(
      await page
        .locator(`tr[data-run="${runs['billing']}"]`)
        .getByRole('button', { name: 'Dismiss' })
        .count(),
    ).toBe(0);
    expect(await button(page, 'Replay')).toBe(0);
    await page.getByRole('combobox', { name: /^Job/ }).selectOption('shop/flaky');
    await page.getByRole('button', { name: 'Replay', exact: true }).waitFor();

    await services(page);
    const shop = page.locator('section.card', {
      has: page.getByRole('heading', { name: 'shop/worker' }),
    });
    const billing = page.locator('section.card', {
      has: page.getByRole('heading', { name: 'billing/ledger' }),
    });
    for (const name of ['Start', 'Restart', 'Stop']) {
      expect(await shop.getByRole('button', { name, exact: true }).count(), name).toBe(1);
      expect(await billing.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    }
    await until(
      async () => (await shop.getByRole('button', { name: /Output of instance/ }).count()) === 1,
      'the output button of shop/worker',
    );
    expect(await billing.getByRole('button', { name: /Output of instance/ }).count()).toBe(0);
    await billing.getByText('Read-only here: this session acts on app shop only').waitFor();

    expect(problems()).toEqual([]);
  }, 60_000);
});

describe('an admin', () => {
  it('sees every action on every app', async () => {
    const { page, problems } = await signedIn('admin');
    for (const [app, job] of [
      ['shop', 'report'],
      ['billing', 'settle'],
    ]) {
      await jobPage(page, app!, job!);
      await page.getByRole('button', { name: 'Run now' }).waitFor();
      for (const name of ['Run later', 'Pause', 'Dry run', 'Start backfill'])
        expect(await button(page, name), `${name} on ${app}`).toBe(1);
    }
    await runPage(page, runs['billing'] as string);
    await page.getByRole('button', { name: 'Replay' }).waitFor();
    await deadLetters(page);
    expect(await button(page, 'Dismiss')).toBe(2);
    expect(await button(page, 'Replay')).toBe(1);
    await services(page);
    for (const name of ['Start', 'Restart', 'Stop']) expect(await button(page, name), name).toBe(2);
    expect(await page.getByText(/Read-only/).count()).toBe(0);
    expect(problems()).toEqual([]);
  }, 60_000);
});
