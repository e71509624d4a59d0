/**
 * The jobs page of the web UI with 10,000 jobs (SPEC §13 "stays responsive"), in a real
 * headless Chromium: 40 manifests × 250 jobs, 20 ended runs each in the ledger (200,000 rows).
 * Times the first rows after navigation, the whole list loaded, and a name filter answering; the
 * median of a few page loads. `test/ui/scale.test.ts` checks the same page works at this size
 * (virtualised rows, filters, the last job reachable); the times live here, not in a test.
 */
import {
  SCALE,
  launchBrowser,
  login,
  newContext,
  scaleManifests,
  seedScaleRuns,
  startUiDaemon,
} from '../test/ui/harness.js';

/** What one measurement gives: medians over the page loads, in ms. */
export interface UiScaleRow {
  jobs: number;
  loads: number;
  apiMs: number;
  firstRowsMs: number;
  allLoadedMs: number;
  filterMs: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

/** Runs the measurement; needs `chromium-headless-shell` (or `CRONIX_CHROMIUM`). */
export async function benchUiScale(loads = 5): Promise<UiScaleRow> {
  const d = await startUiDaemon({ manifests: scaleManifests });
  const browser = await launchBrowser();
  try {
    await seedScaleRuns(d);
    const api: number[] = [];
    const first: number[] = [];
    const all: number[] = [];
    const filter: number[] = [];
    const total = (SCALE.apps * SCALE.perApp).toLocaleString('en-US');
    for (let i = 0; i < loads; i++) {
      const t = performance.now();
      const { status } = await d.api('GET', '/api/v1/jobs');
      if (status !== 200) throw new Error(`GET /api/v1/jobs answered ${status}`);
      api.push(performance.now() - t);

      const context = await newContext(browser);
      const page = await context.newPage();
      await login(page, d.url, d.token);
      const t0 = performance.now();
      await page.goto(`${d.url}/jobs`);
      await page.locator('table.jobs tbody tr[aria-rowindex]').first().waitFor();
      first.push(performance.now() - t0);
      await page
        .locator('.filters .count', { hasText: new RegExp(`^${total} of ${total} jobs$`) })
        .waitFor();
      all.push(performance.now() - t0);
      const t1 = performance.now();
      await page.getByLabel('Name').fill('app-17/job-24');
      await page.locator('.filters .count', { hasText: `10 of ${total} jobs` }).waitFor();
      filter.push(performance.now() - t1);
      await context.close();
    }
    return {
      jobs: SCALE.apps * SCALE.perApp,
      loads,
      apiMs: Math.round(median(api)),
      firstRowsMs: Math.round(median(first)),
      allLoadedMs: Math.round(median(all)),
      filterMs: Math.round(median(filter)),
    };
  } finally {
    await browser.close();
    await d.stop();
  }
}
