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

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
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
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
