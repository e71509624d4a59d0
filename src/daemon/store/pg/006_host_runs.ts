/**
 * PostgreSQL migration 006 (SPEC §15), as SQLite's 006: what a host's report says beyond a §7
 * run, and the output tails of reported runs (see `migrations/006_host_runs.ts`).
 */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg006HostRuns: Migration = {
  version: 6,
  name: 'host_runs',
  sql: `
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN exit_code INTEGER;
ALTER TABLE runs ADD COLUMN clock_skew_ms BIGINT;
ALTER TABLE runs ADD COLUMN lateness_ms BIGINT;
ALTER TABLE runs ADD COLUMN fencing_token TEXT;

CREATE TABLE run_outputs (
  run_id     TEXT   NOT NULL PRIMARY KEY,
  output     TEXT   NOT NULL,
  created_at BIGINT NOT NULL
);
`,
};
