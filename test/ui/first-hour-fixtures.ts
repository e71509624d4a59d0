/**
 * What the first-hour tests (mobile.test.ts, desktop.test.ts) add to the UI tests' jobs: seconds
 * schedules (whose words were wrong), a long job name, a job that notifies a webhook (its notify
 * settings on the job page, a real notification on the Notifications page), and the checks they
 * share: no sideways scroll, and every rendered instant in the one format of docs/ui.md.
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { uiManifests, type UiDaemon } from './harness.js';

/** The `tick` app's jobs: name → schedule. */
export const TICK_JOBS = {
  'half-minute': '*/30 * * * * *',
  'half-hour': '0 */30 * * * *',
  'second-thirty': '30 * * * * *',
  'nightly-ledger-reconciliation-for-every-region': '0 3 * * *',
} as const;

/** The job that notifies (`chat`, a webhook into the sink) and fails when run. */
export const WATCHED = 'tick/watched';

/** {@link uiManifests} plus the `tick` app. */
export function firstHourManifests(sinkUrl: string): Record<string, unknown>[] {
  const auth = { secret_refs: ['env:UI_TEST_SECRET'] };
  return [
    ...uiManifests(sinkUrl),
    {
      version: 1,
      app: 'tick',
      notifiers: { chat: { type: 'webhook', url: `${sinkUrl}/ok/hook` } },
      jobs: [
        ...Object.entries(TICK_JOBS).map(([name, schedule]) => ({
          name,
          schedule,
          request: { url: `${sinkUrl}/ok/${name}` },
          auth,
        })),
        {
          name: 'watched',
          schedule: '0 0 1 1 *',
          request: { url: `${sinkUrl}/fail` },
          policy: { retries: { max_attempts: 1 } },
          notify: [
            {
              to: 'chat',
              on: ['failed', 'slow'],
              slow_after_seconds: 120,
              repeat_every_seconds: 900,
            },
          ],
          auth,
        },
      ],
    },
  ];
}

/** Runs `tick/watched` (it fails) and waits for its delivered `failed` notification. */
export async function notifyOnce(d: UiDaemon): Promise<void> {
  expect((await d.api('POST', '/api/v1/jobs/tick/watched/trigger')).status).toBe(202);
  for (;;) {
    const { json } = await d.api('GET', '/api/v1/notifications?status=delivered');
    if (json.notifications.length > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The page does not scroll sideways, and the header spans it. */
export async function expectNoSideScroll(page: Page, what: string): Promise<void> {
  const m = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    header: document.querySelector('header.top')?.getBoundingClientRect().width ?? null,
  }));
  expect(m.scrollWidth, `${what}: page wider than the window`).toBeLessThanOrEqual(m.innerWidth);
  if (m.header !== null) expect(m.header, `${what}: header`).toBeGreaterThanOrEqual(m.scrollWidth);
}

/**
 * Every table fits inside its card (section) or page: none spills out.
 * @returns how many tables were checked
 */
export async function expectTablesInside(page: Page, what: string): Promise<number> {
  const spills = await page.evaluate(() =>
    [...document.querySelectorAll('main table')].flatMap((t) => {
      const box = t.closest('section, main')!.getBoundingClientRect();
      const r = t.getBoundingClientRect();
      return r.width > 0 && r.right > box.right + 0.5
        ? [`${t.className}: ${r.right} > ${box.right}`]
        : [];
    }),
  );
  expect(spills, `${what}: tables spill out of their cards`).toEqual([]);
  return page.locator('main table').count();
}

/** Text of the page (SVG and tooltips too), without `code` and `pre` (run keys, headers sent). */
export function renderedText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const text = [...document.querySelectorAll('body *')]
      .filter((e) => !e.closest('code, pre, script, style'))
      .flatMap((e) => [...e.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE))
      .map((n) => n.textContent ?? '');
    const titles = [...document.querySelectorAll('[title]')].map((e) => e.getAttribute('title'));
    return [...text, ...titles].join('\n');
  });
}

/** The one way the UI writes an instant (docs/ui.md): `2026-11-26 09:16:51 UTC+01:00`. */
export const INSTANT = /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC(?:[+-]\d{2}:\d{2})?(?![\d:])/;

/** Every date in `text` is written in the one format; none in a 12-hour, d/m/y or GMT±n form. */
export function expectOneDateFormat(text: string, what: string): void {
  expect(text, `${what}: a 12-hour time`).not.toMatch(
    /\b\d{1,2}:\d{2}(?::\d{2})?\s?[AaPp]\.?[Mm]\b/,
  );
  expect(text, `${what}: a d/m/y date`).not.toMatch(/\b\d{1,2}\/\d{1,2}\/\d{2,4}\b/);
  expect(text, `${what}: a zone abbreviation`).not.toMatch(/\b(?:GMT|CES?T|[PE][SD]T)\b/);
  const dates = [...text.matchAll(/\d{4}-\d{2}-\d{2}\S*(?: \S+){0,2}/g)].map((m) => m[0]);
  const odd = dates.filter((d) => !new RegExp(`^${INSTANT.source}`).test(d));
  expect(odd, `${what}: dates not in the one format`).toEqual([]);
}
