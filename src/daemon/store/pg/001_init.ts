/**
 * PostgreSQL migration 001: the same ledger as SQLite migrations 001 and 002
 * (runs, run-key and fire claims, checkpoints, paused jobs), plus what high
 * availability needs (SPEC §10): the leader lease, the replicas seen, and the
 * commands a standby forwards to the leader. Times of the ledger are BIGINT
 * epoch milliseconds like SQLite's; the lease and replica times are the
 * database's own `timestamptz` (the lease runs on the database's clock).
 */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg001Init: Migration = {
  version: 1,
  name: 'init',
  sql: `
CREATE TABLE runs (
  seq            BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id             TEXT    NOT NULL UNIQUE,
  run_key        TEXT    NOT NULL,
  app            TEXT    NOT NULL,
  job            TEXT    NOT NULL,
  schedule_index INTEGER,
  scheduled_time BIGINT  NOT NULL,
  "trigger"      TEXT    NOT NULL,
  phase          TEXT    NOT NULL,
  outcome        TEXT,
  attempts       INTEGER NOT NULL DEFAULT 0,
  last_status    INTEGER,
  created_at     BIGINT  NOT NULL,
  started_at     BIGINT,
  ended_at       BIGINT,
  due_at         BIGINT,
  error          TEXT,
  attempt_log    JSONB
);
CREATE INDEX runs_app_job_seq ON runs (app, job, seq);
CREATE INDEX runs_phase ON runs (phase, seq);
CREATE INDEX runs_outcome ON runs (outcome, seq);
CREATE INDEX runs_app_job_scheduled ON runs (app, job, scheduled_time);
CREATE INDEX runs_app_job_success ON runs (app, job, ended_at) WHERE outcome = 'success';

CREATE TABLE run_keys (
  run_key    TEXT   NOT NULL PRIMARY KEY,
  run_id     TEXT   NOT NULL,
  state      TEXT   NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX run_keys_state ON run_keys (state, updated_at);

CREATE TABLE fires (
  app            TEXT    NOT NULL,
  job            TEXT    NOT NULL,
  schedule_index INTEGER NOT NULL,
  scheduled_time BIGINT  NOT NULL,
  run_id         TEXT    NOT NULL,
  PRIMARY KEY (app, job, schedule_index, scheduled_time)
);

CREATE TABLE checkpoints (
  app            TEXT    NOT NULL,
  job            TEXT    NOT NULL,
  schedule_index INTEGER NOT NULL,
  at             BIGINT  NOT NULL,
  PRIMARY KEY (app, job, schedule_index)
);

CREATE TABLE paused_jobs (
  app TEXT NOT NULL,
  job TEXT NOT NULL,
  PRIMARY KEY (app, job)
);

-- the leader lease (SPEC §10): one row; epoch grows whenever the holder changes
CREATE TABLE lease (
  name        TEXT        NOT NULL PRIMARY KEY,
  holder      TEXT        NOT NULL,
  epoch       BIGINT      NOT NULL,
  expires_at  TIMESTAMPTZ NOT NULL,
  acquired_at TIMESTAMPTZ NOT NULL
);

-- every replica, as last seen by the database's clock
CREATE TABLE replicas (
  replica   TEXT        NOT NULL PRIMARY KEY,
  last_seen TIMESTAMPTZ NOT NULL,
  role      TEXT        NOT NULL
);

-- API mutations a standby hands to the leader (LISTEN/NOTIFY wakes it)
CREATE TABLE commands (
  id         BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind       TEXT        NOT NULL,
  payload    JSONB       NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  done_at    TIMESTAMPTZ,
  result     JSONB
);
CREATE INDEX commands_pending ON commands (id) WHERE done_at IS NULL;
`,
};
