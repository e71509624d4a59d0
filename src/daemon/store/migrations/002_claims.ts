/**
 * Migration 002 (SPEC §9): the run-key and fire claims, and explained runs.
 *
 * - `run_keys`: one row per held run key: `running` while one run holds it,
 *   `succeeded` for good once a run with that key succeeded. A claim is an
 *   insert-if-absent; a failed or stopped run deletes its row (releases it).
 * - `fires`: one row per scheduled instant recorded (schedule and catch-up
 *   runs, missed rows); a second recording of the same instant is refused.
 * - `runs.error`, `runs.attempt_log` (JSON): why a run ended as it did.
 *
 * Both claim tables are filled from the existing ledger (first row wins), so
 * a data dir written by an older cronix keeps its guarantees. The
 * `(run_key, outcome)` index served the old succeeded-key lookups and goes.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m002Claims: Migration = {
  version: 2,
  name: 'claims',
  sql: `
ALTER TABLE runs ADD COLUMN error TEXT;
ALTER TABLE runs ADD COLUMN attempt_log TEXT;

CREATE TABLE run_keys (
  run_key    TEXT    NOT NULL PRIMARY KEY,
  run_id     TEXT    NOT NULL,
  state      TEXT    NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
-- endCrashed releases running keys; retention prunes old succeeded ones
CREATE INDEX run_keys_state ON run_keys (state, updated_at);

CREATE TABLE fires (
  app            TEXT    NOT NULL,
  job            TEXT    NOT NULL,
  schedule_index INTEGER NOT NULL,
  scheduled_time INTEGER NOT NULL,
  run_id         TEXT    NOT NULL,
  PRIMARY KEY (app, job, schedule_index, scheduled_time)
) WITHOUT ROWID;

INSERT OR IGNORE INTO run_keys (run_key, run_id, state, updated_at)
  SELECT run_key, id, 'succeeded', COALESCE(ended_at, created_at)
  FROM runs WHERE outcome = 'success' ORDER BY seq;
INSERT OR IGNORE INTO fires (app, job, schedule_index, scheduled_time, run_id)
  SELECT app, job, schedule_index, scheduled_time, id
  FROM runs WHERE "trigger" IN ('schedule', 'catchup') AND schedule_index IS NOT NULL
  ORDER BY seq;

DROP INDEX runs_run_key_outcome;
`,
};
