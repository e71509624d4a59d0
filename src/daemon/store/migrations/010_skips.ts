/**
 * Migration 010 (SPEC §16 "Calendars"): the instants an operator skipped (`cronix skip`), one
 * row per job and instant, deleted when the fire is recorded skipped.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m010Skips: Migration = {
  version: 10,
  name: 'skips',
  sql: `
CREATE TABLE skips (
  app        TEXT NOT NULL,
  job        TEXT NOT NULL,
  at         INTEGER NOT NULL,
  skipped_by TEXT NOT NULL,
  since      INTEGER NOT NULL,
  PRIMARY KEY (app, job, at)
) WITHOUT ROWID;
`,
};
