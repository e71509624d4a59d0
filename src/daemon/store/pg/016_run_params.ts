/** PostgreSQL migration 016 (SPEC §16): idempotency keys and run parameters, as SQLite's 016. */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg016RunParams: Migration = {
  version: 16,
  name: 'run_params',
  sql: `
CREATE TABLE idempotency_keys (
  app        TEXT NOT NULL,
  job        TEXT NOT NULL,
  key        TEXT NOT NULL,
  run_id     TEXT NOT NULL,
  admission  TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (app, job, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
ALTER TABLE runs ADD COLUMN params TEXT;
`,
};
