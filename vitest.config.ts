import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
 * Files that take a minute or more (measured on the CI machine), longest first. They start
 * first in their project, so a run's tail is not one long file alone on a worker while the CPU
 * idles: stress runs use the CPU, the real-cron and real-time ones mostly wait, and both
 * overlap the many short files. (Vitest orders by its cache of earlier runs; a fresh clone has
 * none, and files then run in file-size order.)
 */
const LONG_FIRST = [
  'test/shim/duplicate-stress.test.ts',
  'test/reconcile/cron-report-e2e.test.ts',
  'test/daemon/signals.test.ts',
  'test/reconcile/cron-e2e.test.ts',
  'test/daemon/ha-calendar.test.ts',
  'test/daemon/seconds.test.ts',
  'test/daemon/ha-chaos.test.ts',
  'test/daemon/crash.test.ts',
  'test/shim/overlap-stress.test.ts',
  'test/shim/report-e2e.test.ts',
  'test/daemon/event-streams-flood.test.ts',
  'test/contract/schedule-seconds-property.test.ts',
  'test/daemon/store-postgres.test.ts',
  'test/contract/schedule-property.test.ts',
];

/** Vitest's order (projects by `groupOrder`), with the {@link LONG_FIRST} files first in theirs. */
class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = LONG_FIRST.indexOf(relative(process.cwd(), f.moduleId));
      return i < 0 ? LONG_FIRST.length : i;
    };
    const group = (f: TestSpecification): number => f.project.config.sequence.groupOrder;
    // stable: within a project, the long ones first and the rest in Vitest's order
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
    sequence: { sequencer: LongFirst },
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
          isolate: false,
          include: SLOW,
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
