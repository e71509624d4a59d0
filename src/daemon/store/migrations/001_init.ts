/**
 * Migration 001: the run ledger, the scheduler checkpoint and paused jobs
 * (SPEC §7). SQLite dialect; times are INTEGER epoch milliseconds.
 *
 * `seq` is the rowid (INTEGER PRIMARY KEY AUTOINCREMENT): monotonic, never
 * reused, and implicitly the last column of every index, so `(phase)` and
 * `(outcome)` also serve "newest first" scans. Enum columns carry no CHECK
 * constraints: the TypeScript types guard them, and SQLite can only change a
 * CHECK by rebuilding the table.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m001Init: Migration = {
  version: 1,
  name: 'init',
  sql: `
CREATE TABLE runs (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  id             TEXT    NOT NULL UNIQUE,
  run_key        TEXT    NOT NULL,
  app            TEXT    NOT NULL,
  job            TEXT    NOT NULL,
  schedule_index INTEGER,
  scheduled_time INTEGER NOT NULL,
  "trigger"      TEXT    NOT NULL,
  phase          TEXT    NOT NULL,
  outcome        TEXT,
  attempts       INTEGER NOT NULL DEFAULT 0,
  last_status    INTEGER,
  created_at     INTEGER NOT NULL,
  started_at     INTEGER,
  ended_at       INTEGER,
  due_at         INTEGER
);
-- history of one job, newest first; queued runs of one job, FIFO
CREATE INDEX runs_app_job_seq ON runs (app, job, seq);
-- queued and running runs (a small fraction of the ledger)
CREATE INDEX runs_phase ON runs (phase);
-- hasSucceeded(run_key): a succeeded fire is never dispatched again
CREATE INDEX runs_run_key_outcome ON runs (run_key, outcome);
-- list filter by outcome
CREATE INDEX runs_outcome ON runs (outcome);
-- outcomeCounts(app, job, since): the completeness window
CREATE INDEX runs_app_job_scheduled ON runs (app, job, scheduled_time);
-- lastSuccess(app, job): one index probe
CREATE INDEX runs_app_job_success ON runs (app, job, ended_at) WHERE outcome = 'success';

CREATE TABLE checkpoints (
  app            TEXT    NOT NULL,
  job            TEXT    NOT NULL,
  schedule_index INTEGER NOT NULL,
  at             INTEGER NOT NULL,
  PRIMARY KEY (app, job, schedule_index)
) WITHOUT ROWID;

CREATE TABLE paused_jobs (
  app TEXT NOT NULL,
  job TEXT NOT NULL,
  PRIMARY KEY (app, job)
) WITHOUT ROWID;
`,
};
