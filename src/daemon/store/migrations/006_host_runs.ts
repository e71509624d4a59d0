/**
 * Migration 006 (SPEC §15): host-mode runs in the ledger.
 *
 * - `runs.host`, `runs.exit_code`, `runs.clock_skew_ms`, `runs.lateness_ms`,
 *   `runs.fencing_token`: what a host's report says beyond a §7 run (see `host-types.ts`).
 * - `run_outputs`: the output tail (at most 64 KiB) an `ended` report carried, out of the
 *   `runs` rows so that listing runs never reads it. Kept in the ledger rather than in
 *   `<data-dir>/logs` because any replica of a cluster accepts a report and any serves it.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m006HostRuns: Migration = {
  version: 6,
  name: 'host_runs',
  sql: `
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN exit_code INTEGER;
ALTER TABLE runs ADD COLUMN clock_skew_ms INTEGER;
ALTER TABLE runs ADD COLUMN lateness_ms INTEGER;
ALTER TABLE runs ADD COLUMN fencing_token TEXT;

CREATE TABLE run_outputs (
  run_id     TEXT    NOT NULL PRIMARY KEY,
  output     TEXT    NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
`,
};
