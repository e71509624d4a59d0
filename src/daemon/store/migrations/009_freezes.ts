/**
 * Migration 009 (SPEC §16): freezes and pause notes.
 *
 * - `freezes`: one per scope (`app`, `job`; '' = every), with reason, who, since and until.
 * - `paused_jobs` gains the pause's note: reason, who, since when.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m009Freezes: Migration = {
  version: 9,
  name: 'freezes',
  sql: `
CREATE TABLE freezes (
  app       TEXT NOT NULL,
  job       TEXT NOT NULL,
  reason    TEXT NOT NULL,
  frozen_by TEXT NOT NULL,
  since     INTEGER NOT NULL,
  until     INTEGER,
  PRIMARY KEY (app, job)
) WITHOUT ROWID;
ALTER TABLE paused_jobs ADD COLUMN reason TEXT;
ALTER TABLE paused_jobs ADD COLUMN paused_by TEXT;
ALTER TABLE paused_jobs ADD COLUMN paused_at INTEGER;
`,
};
