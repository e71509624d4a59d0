/** PostgreSQL migration 010 (SPEC §16 "Calendars"): skipped instants, as SQLite's 010. */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg010Skips: Migration = {
  version: 10,
  name: 'skips',
  sql: `
CREATE TABLE skips (
  app        TEXT NOT NULL,
  job        TEXT NOT NULL,
  at         BIGINT NOT NULL,
  skipped_by TEXT NOT NULL,
  since      BIGINT NOT NULL,
  PRIMARY KEY (app, job, at)
);
`,
};
