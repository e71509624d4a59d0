/**
 * PostgreSQL migration 002 (SPEC §11), the same as SQLite's 003: whether a
 * command run's output went past its cap, and the process of its current
 * attempt (pid and start identity), so a crashed leader's leftovers can be
 * found and stopped.
 */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg002Commands: Migration = {
  version: 2,
  name: 'commands',
  sql: `
ALTER TABLE runs ADD COLUMN output_truncated BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE runs ADD COLUMN pid INTEGER;
ALTER TABLE runs ADD COLUMN pid_start TEXT;
`,
};
