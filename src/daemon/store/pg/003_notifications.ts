/**
 * PostgreSQL migration 003 (SPEC §12), the same as SQLite's 004: notifications.
 *
 * - `notifications`: the outbox and the record of every notification — its
 *   message and body (sent identically on every attempt), delivery status,
 *   attempts, last status and error, and when it is tried next. `event_key`
 *   (`<run id>/<event>/<notifier>`) is unique: an event notifies a notifier once.
 * - `notify_groups`: the open grouping states (SPEC §12 "grouping"): one row per
 *   job, notifier and kind (`failed`, `missed`) while the job is failing; deleted
 *   at its recovery.
 */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg003Notifications: Migration = {
  version: 3,
  name: 'notifications',
  sql: `
CREATE TABLE notifications (
  seq             BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id              TEXT    NOT NULL UNIQUE,
  event_key       TEXT    NOT NULL UNIQUE,
  event           TEXT    NOT NULL,
  app             TEXT    NOT NULL,
  job             TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  notifier        TEXT    NOT NULL,
  notifier_type   TEXT    NOT NULL,
  count           INTEGER NOT NULL,
  text            TEXT    NOT NULL,
  body            TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  last_status     INTEGER,
  last_error      TEXT,
  created_at      BIGINT  NOT NULL,
  next_attempt_at BIGINT ,
  ended_at        BIGINT 
);
-- the delivery queue: pending ones by their next attempt
CREATE INDEX notifications_pending ON notifications (next_attempt_at) WHERE status = 'pending';
-- the list of one job, newest first
CREATE INDEX notifications_app_job_seq ON notifications (app, job, seq);

CREATE TABLE notify_groups (
  app          TEXT    NOT NULL,
  job          TEXT    NOT NULL,
  notifier     TEXT    NOT NULL,
  kind         TEXT    NOT NULL,
  last_sent_at BIGINT ,
  suppressed   INTEGER NOT NULL,
  total        INTEGER NOT NULL,
  PRIMARY KEY (app, job, notifier, kind)
);
`,
};
