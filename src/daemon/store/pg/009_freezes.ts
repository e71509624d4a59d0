/** PostgreSQL migration 009 (SPEC §16): freezes and pause notes, as SQLite's 009. */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg009Freezes: Migration = {
  version: 9,
  name: 'freezes',
  sql: `
CREATE TABLE freezes (
  app       TEXT NOT NULL,
  job       TEXT NOT NULL,
  reason    TEXT NOT NULL,
  frozen_by TEXT NOT NULL,
  since     BIGINT NOT NULL,
  until     BIGINT,
  PRIMARY KEY (app, job)
);
ALTER TABLE paused_jobs ADD COLUMN reason TEXT;
ALTER TABLE paused_jobs ADD COLUMN paused_by TEXT;
ALTER TABLE paused_jobs ADD COLUMN paused_at BIGINT;
`,
};
