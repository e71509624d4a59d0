/**
 * PostgreSQL migration 005 (SPEC §9 item 6), as SQLite's 005 for runs: why a command run's
 * output could not be written (null: it was). A PostgreSQL ledger needs no owner row: the
 * lease is its owner (SPEC §10).
 */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg005OutputLost: Migration = {
  version: 5,
  name: 'output_lost',
  sql: `ALTER TABLE runs ADD COLUMN output_lost TEXT;`,
};
