/**
 * The browser tests' harness: a real daemon (in-process `startDaemon`, real
 * HTTP server, real SQLite ledger, the built UI from dist/ui), a scripted sink
 * as the jobs' app, and Debian's chromium-headless-shell driven by
 * playwright-core. Each page records console errors, page errors and every
 * request's origin, so tests can assert "no console error" and "no request to
 * another origin"; screenshots go to test-output/screenshots.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { DaemonEmitter } from '../../src/daemon/events.js';
import type { NewRun, RunOutcome } from '../../src/daemon/store/types.js';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { newRun } from '../daemon/store-fixtures.js';
import { startSink, type Sink } from '../helpers/sink.js';

/** The secret the jobs sign with; must never appear in a page. */
export const SECRET = 'ui-test-secret-value-0123456789';
/** A credential written in a manifest's static headers; shown only as (hidden). */
export const STATIC_CREDENTIAL = 'static-manifest-credential-42';
export const SCREENSHOTS = join(process.cwd(), 'test-output', 'screenshots');

/** Where Debian installs the headless shell; `CRONIX_CHROMIUM` overrides. */
export const CHROMIUM = process.env['CRONIX_CHROMIUM'] ?? '/usr/bin/chromium-headless-shell';

/** The flags that let Chromium run in this closed, sandbox-less environment. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches the browser, or fails naming what to install. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install chromium-headless-shell (or set CRONIX_CHROMIUM)`,
    );
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** The viewer's zone in the tests: differs from every job's, so both clocks show. */
export const VIEWER_ZONE = 'America/Los_Angeles';

/** A fresh browser context (own cookies) in the viewer's zone. */
export async function newContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({
    timezoneId: VIEWER_ZONE,
    locale: 'en-GB',
    viewport: { width: 1400, height: 900 },
  });
  // A wait that never ends fails on its own after 30 s, naming the locator, before the slow
  // project's 90-s test timeout (which would only say the test timed out).
  context.setDefaultTimeout(30_000);
  return context;
}

/** A page that records its console errors and the URLs it requested. */
export interface WatchedPage {
  page: Page;
  consoleErrors: string[];
  requests: string[];
}

export async function watch(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const w: WatchedPage = { page, consoleErrors: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') w.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => w.consoleErrors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => w.requests.push(r.url()));
  return w;
}

/** URLs that are not on the daemon's origin (data: URLs are local, allowed). */
export function foreignRequests(w: WatchedPage, origin: string): string[] {
  return w.requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'));
}

/** A full-page screenshot under test-output/screenshots. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A daemon with the UI test's jobs and a sink answering by path. */
export interface UiDaemon {
  daemon: DaemonHandle;
  /** The daemon's event emitter (what the live stream publishes). */
  events: DaemonEmitter;
  sink: Sink;
  url: string;
  token: string;
  dir: string;
  /** Calls the API with the bearer token. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON, read loosely
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  stop(): Promise<void>;
}

/** The sink's answers: `/ok` 200, `/fail` 503, `/reject` 400, `/slow` 200 after 2.5 s. */
function sinkScript(_: number, req: { url: string }) {
  if (req.url.startsWith('/fail')) return { status: 503, body: 'down' };
  if (req.url.startsWith('/reject')) return { status: 400, body: 'no' };
  if (req.url.startsWith('/slow')) return { status: 200, body: 'ok', delayMs: 2_500 };
  return { status: 200, body: 'ok' };
}

/** The jobs of the UI tests (`sinkUrl` is the app). */
export function uiManifests(sinkUrl: string): Record<string, unknown>[] {
  const auth = { secret_refs: ['env:UI_TEST_SECRET'] };
  return [
    {
      version: 1,
      app: 'shop',
      jobs: [
        {
          name: 'report',
          schedule: '0 0 1 1 *',
          request: {
            url: `${sinkUrl}/ok/report`,
            headers: { Authorization: `Bearer ${STATIC_CREDENTIAL}`, 'X-Team': 'ops' },
          },
          auth,
        },
        {
          name: 'flaky',
          schedule: '*/30 * * * *',
          request: { url: `${sinkUrl}/fail` },
          policy: { retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 } },
          auth,
        },
      ],
    },
    {
      version: 1,
      app: 'billing',
      jobs: [
        {
          name: 'settle',
          schedule: '30 2 25-31 3,10 *',
          timezone: 'Europe/Berlin',
          request: { url: `${sinkUrl}/ok/settle?token=query-credential-77` },
          auth,
        },
        {
          name: 'slow',
          schedule: '0 0 1 1 *',
          request: { url: `${sinkUrl}/slow` },
          policy: { concurrency: 'Enqueue', queue_max: 5 },
          auth,
        },
        {
          name: 'reject',
          schedule: '0 6 * * 1-5',
          timezone: 'America/New_York',
          request: { url: `${sinkUrl}/reject` },
          auth,
        },
      ],
    },
    {
      version: 1,
      app: 'ops',
      jobs: [
        {
          // a command job (SPEC §11): its pages show the command and the captured output
          name: 'backup',
          schedule: '0 0 1 1 *',
          command: { argv: ['sh', '-c', 'echo backup done'], env: { TARGET: 'vault' } },
        },
      ],
    },
  ];
}

/** The 10,000-job page of the scale test and `bench/ui-scale.ts`: 40 apps × 250 jobs. */
export const SCALE = {
  apps: 40,
  perApp: 250,
  app: (a: number): string => `app-${String(a).padStart(2, '0')}`,
  job: (j: number): string => `job-${String(j).padStart(3, '0')}`,
};

/** The {@link SCALE} jobs (`sinkUrl` is the app). */
export function scaleManifests(sinkUrl: string): Record<string, unknown>[] {
  return Array.from({ length: SCALE.apps }, (_, a) => ({
    version: 1,
    app: SCALE.app(a),
    jobs: Array.from({ length: SCALE.perApp }, (_, j) => ({
      name: SCALE.job(j),
      schedule: `${j % 60} ${a % 24} 1 1 *`,
      timezone: ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'][j % 4],
      request: { url: `${sinkUrl}/ok/${a}/${j}` },
      auth: { secret_refs: ['env:UI_TEST_SECRET'] },
    })),
  }));
}

/** 20 ended runs per {@link SCALE} job in the ledger (200,000 rows), newest first a minute apart. */
export async function seedScaleRuns(d: UiDaemon): Promise<void> {
  const outcomes: RunOutcome[] = ['success', 'success', 'success', 'retries_exhausted', 'skipped'];
  for (let a = 0; a < SCALE.apps; a++) {
    const rows: NewRun[] = [];
    for (let j = 0; j < SCALE.perApp; j++)
      for (let k = 0; k < 20; k++)
        rows.push(
          newRun({
            app: SCALE.app(a),
            job: SCALE.job(j),
            trigger: 'manual',
            scheduleIndex: null,
            phase: 'ended',
            outcome: outcomes[(j + k) % outcomes.length]!,
            endedAt: Date.now() - k * 60_000,
          }),
        );
    await d.daemon.store.write(rows.map((run) => ({ kind: 'insert' as const, run })));
  }
}

/** Starts the daemon over `manifests` (default: {@link uiManifests}). */
export async function startUiDaemon(
  opts: { noAuth?: boolean; manifests?: (sinkUrl: string) => Record<string, unknown>[] } = {},
): Promise<UiDaemon> {
  const sink = await startSink(sinkScript);
  const dir = mkdtempSync(join(tmpdir(), 'cronix-ui-'));
  const files = (opts.manifests ?? uiManifests)(sink.url).map((m, i) => {
    const file = join(dir, `manifest-${i}.json`);
    writeFileSync(file, JSON.stringify(m));
    return file;
  });
  let events: DaemonEmitter | undefined;
  const daemon = await startDaemon({
    onEvents: (e) => (events = e),
    manifests: files,
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { UI_TEST_SECRET: SECRET },
    ...(opts.noAuth ? { noAuth: true } : {}),
  });
  const token = daemon.token ?? '';
  if (events === undefined) throw new Error('the daemon did not hand over its events');
  return {
    daemon,
    events,
    sink,
    url: daemon.url,
    token,
    dir,
    async api(method, path, body) {
      const res = await fetch(`${daemon.url}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    },
    async stop() {
      await daemon.stop(500);
      await sink.close();
    },
  };
}

/** Logs in through the login form. */
export async function login(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** Waits until `f` holds (polling), or fails with `what`. */
export async function until<T>(
  f: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
