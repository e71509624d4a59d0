/** PostgreSQL migration 008 (SPEC §16): dead-letter dismissals, as SQLite's 008. */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg008DeadLetters: Migration = {
  version: 8,
  name: 'dead_letters',
  sql: `
CREATE TABLE dismissals (
  run_id       TEXT PRIMARY KEY,
  note         TEXT NOT NULL,
  dismissed_by TEXT NOT NULL,
  dismissed_at BIGINT NOT NULL
);
CREATE INDEX runs_run_key_seq ON runs (run_key, seq);
`,
};
