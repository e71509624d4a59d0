/**
 * What each attempt sent and got back is recorded, not reconstructed (the first-hour issue,
 * item 5): the `traceparent` of each attempt as it left (so a trace can be matched to the run),
 * and the status and the first 4 KiB of the response body of each HTTP attempt — a 503 with
 * "down" says "down", in the API, `cronix runs <id>` and the run page.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import {
  launchBrowser,
  login,
  newContext,
  startUiDaemon,
  until,
  type UiDaemon,
} from './harness.js';

let d: UiDaemon;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  d = await startUiDaemon();
  browser = await launchBrowser();
  page = await (await newContext(browser)).newPage();
});
afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

it("records each attempt's traceparent and response; the API, the CLI and the run page show them", async () => {
  const before = d.sink.requests.length;
  const t = await d.api('POST', '/api/v1/jobs/shop/flaky/trigger'); // the sink answers 503 "down"
  const id = t.json.run.id as string;
  const run = await until(async () => {
    const r = await d.api('GET', `/api/v1/runs/${id}`);
    return r.json.phase === 'ended' ? r.json : null;
  }, 'the run to end');
  const sent = d.sink.requests.slice(before).filter((r) => r.headers['x-cron-run-id'] === id);
  expect(sent.length).toBe(run.attempt_log.length);
  // each attempt's traceparent is the one that left, and the body that came back
  run.attempt_log.forEach(
    (a: { traceparent: string; response: string; status: number }, i: number) => {
      expect(a.traceparent).toBe(sent[i]!.headers['traceparent']);
      expect(a).toMatchObject({ status: 503, response: 'down' });
    },
  );
  // the request view shows the recorded traceparent, the same on every load
  const views = await Promise.all([1, 2].map(() => d.api('GET', `/api/v1/runs/${id}/request`)));
  const last = run.attempt_log.at(-1).traceparent;
  expect(views.map((v) => v.json.headers['traceparent'])).toEqual([last, last]);
  // the CLI
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'runs', id], {
    env: { ...process.env, CRONIX_URL: d.url, CRONIX_TOKEN: d.token },
  });
  expect(stdout).toContain('attempt 1 response:');
  expect(stdout).toContain('  down');
  expect(stdout).toContain(sent[0]!.headers['traceparent'] as string);
  // the run page
  await login(page, d.url, d.token);
  await page.goto(`${d.url}/runs/${id}`);
  const first = page.locator('details.attempt-response').first();
  await first.locator('summary').click();
  expect(await first.innerText()).toContain('HTTP 503');
  expect(await first.innerText()).toContain('down');
  expect(await first.innerText()).toContain(sent[0]!.headers['traceparent'] as string);
});
