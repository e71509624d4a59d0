/**
 * Migration 007 (SPEC §16): backfills.
 *
 * - `backfills`: one row per backfill — its choices, state, who asked and why it ended.
 * - `backfill_items`: its plan, one row per instant, fixed when it is created (so a dry run and
 *   the runs are the same list); `run_id` is the run that ran the instant last, set in the
 *   transaction that records that run.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m007Backfills: Migration = {
  version: 7,
  name: 'backfills',
  sql: `
CREATE TABLE backfills (
  id                  TEXT    PRIMARY KEY,
  app                 TEXT    NOT NULL,
  job                 TEXT    NOT NULL,
  from_time           INTEGER NOT NULL,
  to_time             INTEGER NOT NULL,
  only_missing        INTEGER NOT NULL,
  parallel            INTEGER NOT NULL,
  stop_after_failures INTEGER,
  state               TEXT    NOT NULL,
  total               INTEGER NOT NULL,
  created_by          TEXT    NOT NULL,
  created_at          INTEGER NOT NULL,
  ended_at            INTEGER,
  reason              TEXT
);
CREATE INDEX backfills_job ON backfills (app, job, created_at);
CREATE INDEX backfills_state ON backfills (state);

CREATE TABLE backfill_items (
  backfill_id    TEXT    NOT NULL,
  position       INTEGER NOT NULL,
  scheduled_time INTEGER NOT NULL,
  schedule_index INTEGER NOT NULL,
  run_key        TEXT    NOT NULL,
  run_id         TEXT,
  PRIMARY KEY (backfill_id, position)
) WITHOUT ROWID;
`,
};
