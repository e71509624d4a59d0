/** PostgreSQL migration 007 (SPEC §16): backfills and their plans, as SQLite's 007. */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg007Backfills: Migration = {
  version: 7,
  name: 'backfills',
  sql: `
CREATE TABLE backfills (
  id                  TEXT    PRIMARY KEY,
  app                 TEXT    NOT NULL,
  job                 TEXT    NOT NULL,
  from_time           BIGINT  NOT NULL,
  to_time             BIGINT  NOT NULL,
  only_missing        BOOLEAN NOT NULL,
  parallel            INTEGER NOT NULL,
  stop_after_failures INTEGER,
  state               TEXT    NOT NULL,
  total               INTEGER NOT NULL,
  created_by          TEXT    NOT NULL,
  created_at          BIGINT  NOT NULL,
  ended_at            BIGINT,
  reason              TEXT
);
CREATE INDEX backfills_job ON backfills (app, job, created_at);
CREATE INDEX backfills_state ON backfills (state);

CREATE TABLE backfill_items (
  backfill_id    TEXT    NOT NULL,
  position       INTEGER NOT NULL,
  scheduled_time BIGINT  NOT NULL,
  schedule_index INTEGER NOT NULL,
  run_key        TEXT    NOT NULL,
  run_id         TEXT,
  PRIMARY KEY (backfill_id, position)
);
`,
};
