/**
 * Migration 003 (SPEC §11): command jobs.
 *
 * - `runs.output_truncated`: the run's output went past `max_output_bytes` (0/1).
 * - `runs.pid`, `runs.pid_start`: the process of a running command run's current attempt, and
 *   its identity beyond the pid (boot id and start time), so a daemon that crashed stops it
 *   at its next start before it ends the run `crashed`.
 *
 * The output itself lives in `<data-dir>/logs/<run id>.log`, not in the ledger.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m003Commands: Migration = {
  version: 3,
  name: 'commands',
  sql: `
ALTER TABLE runs ADD COLUMN output_truncated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN pid INTEGER;
ALTER TABLE runs ADD COLUMN pid_start TEXT;
`,
};
