import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Two projects (docs/architecture.md, "Tests"):
 *
 * - `fast`: pure functions, in-process daemons on fake clocks, the stores against the shared
 *   PostgreSQL and Redis — the default of `npm run test:fast`, seconds to a few minutes;
 * - `slow`: what needs real time or whole processes — real `cronix serve` and `cronix trigger`
 *   processes with SIGKILL and SIGSTOP, chaos and stress runs, a real cron daemon, the browser,
 *   schedules that fire every second for a minute.
 *
 * `npm test` runs both, `fast` first. Most tests wait on I/O, processes or timers, so several
 * files run at once even on two cores; the slow ones, whose processes compete for the CPU, run
 * fewer at a time.
 */
const SLOW = [
  'test/contrib/*.test.ts',
  'test/daemon/admission-property.test.ts',
  'test/daemon/audit.test.ts',
  'test/daemon/backfill-process.test.ts',
  'test/daemon/commands-process.test.ts',
  'test/daemon/crash.test.ts',
  'test/daemon/dead-letters.test.ts',
  'test/daemon/services.test.ts',
  'test/daemon/services-lifecycle.test.ts',
  'test/daemon/event-streams-flood.test.ts',
  'test/daemon/services-ha.test.ts',
  'test/ui/services.test.ts',
  'test/daemon/defects.test.ts',
  'test/daemon/global-scope.test.ts',
  'test/daemon/watch-process.test.ts',
  'test/daemon/watch-ha.test.ts',
  'test/daemon/watch-notify.test.ts',
  'test/daemon/ha-*.test.ts',
  'test/daemon/ledger-owner.test.ts',
  'test/daemon/output-lost.test.ts',
  'test/daemon/process.test.ts',
  'test/daemon/seconds.test.ts',
  'test/daemon/signals.test.ts',
  'test/daemon/stream-revocation.test.ts',
  'test/examples/**/*.test.ts',
  'test/fire/otel.test.ts',
  'test/fire/wasm-baseline.test.ts',
  'test/import/import-watch.test.ts',
  'test/notify/ha.test.ts',
  'test/notify/restart.test.ts',
  'test/packages/*.test.ts',
  'test/reconcile/cron-e2e.test.ts',
  'test/reconcile/cron-report-e2e.test.ts',
  'test/sdk/adapters.test.ts',
  'test/sdk/next.test.ts',
  'test/sdk/run-once*.test.ts',
  'test/shim/*-stress.test.ts',
  'test/shim/fuzz.test.ts',
  'test/shim/redis-chaos.test.ts',
  'test/shim/report-e2e.test.ts',
  'test/shim/seconds.test.ts',
  'test/ui/**/*.test.ts',
];

/**
 * The slow project's three longest files start first, one per worker: the duplicate stress
 * (~4 minutes of two busy cores: 3,600 `cronix trigger` processes), the real-cron end-to-end
 * test (~3 minutes, mostly waiting for minute boundaries) and the signals test (~2 minutes of 30
 * daemon starts). Vitest orders a project by its cache of earlier runs; a fresh clone (CI) has
 * none and ran files in file-size order, so the stress started at 540 s of 970 and the run ended
 * on it alone.
 */
const FIRST = [
  'test/shim/duplicate-stress.test.ts',
  'test/reconcile/cron-report-e2e.test.ts',
  'test/daemon/signals.test.ts',
];
/**
 * Started last in the slow project, after every other file (these first, then the rest of
 * {@link LATE}): the files whose bounds are in real time (leases of 3 s, fires every second),
 * which would be starved beside the stress run, and the second real-cron test (it waits for the
 * cron daemon the first one holds). A try with these among the first put the HA chaos tests
 * beside the stress run: no leader in time.
 */
const LAST = [
  'test/reconcile/cron-e2e.test.ts',
  'test/daemon/seconds.test.ts',
  'test/daemon/ha-calendar.test.ts',
  'test/daemon/ha-chaos.test.ts',
];
const LATE = /^test\/(daemon\/ha-[^/]*|shim\/seconds|daemon\/[a-z-]*-ha|notify\/ha)\.test\.ts$/;

/** Vitest's order, with {@link FIRST} first and {@link LAST}, {@link LATE} last in the slow project. */
class SlowOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      if (f.project.name !== 'slow') return 0;
      const path = relative(process.cwd(), f.moduleId);
      const first = FIRST.indexOf(path);
      if (first >= 0) return first - FIRST.length;
      const last = LAST.indexOf(path);
      if (last >= 0) return 1 + last;
      return LATE.test(path) ? 1 + LAST.length : 0;
    };
    const group = (f: TestSpecification): number => f.project.config.sequence.groupOrder;
    // stable: everything else keeps Vitest's order
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => group(a.f) - group(b.f) || rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    sequence: { sequencer: SlowOrder },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: SLOW,
          maxWorkers: 4,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'slow',
          include: SLOW,
          maxWorkers: 3,
          // Bounds, not timings: these tests start processes and browsers beside the duplicate
          // stress's two busy cores; CI once took more than 30 s for a browser test that takes
          // 1 s alone.
          testTimeout: 90_000,
          hookTimeout: 90_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
