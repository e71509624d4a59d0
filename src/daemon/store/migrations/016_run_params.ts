/**
 * Migration 016 (SPEC §16 "Run parameters"): idempotency keys of manual triggers, and the
 * parameters a manual run was given.
 *
 * - `idempotency_keys`: per job and key, the first run and its admission; kept a bounded time.
 * - `runs.params`: JSON `{"body"?, "env"?}` of a manual run with parameters, else NULL.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m016RunParams: Migration = {
  version: 16,
  name: 'run_params',
  sql: `
CREATE TABLE idempotency_keys (
  app        TEXT NOT NULL,
  job        TEXT NOT NULL,
  key        TEXT NOT NULL,
  run_id     TEXT NOT NULL,
  admission  TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (app, job, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
ALTER TABLE runs ADD COLUMN params TEXT;
`,
};
