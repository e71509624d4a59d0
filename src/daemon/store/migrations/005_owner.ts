/**
 * Migration 005 (SPEC §9 items 6 and 10): who owns the ledger, which ledger it is, and output
 * that could not be written.
 *
 * - `owner`: one row, the daemon process that owns this ledger — a random boot id per process,
 *   its pid, process start time and host, and its heartbeat. A second daemon refuses a ledger
 *   whose owner is alive; every write of the owner checks the row is still its own.
 * - `meta`: `ledger_id`, a UUID written when the ledger is created and copied beside it into
 *   `<data-dir>/ledger.id`, so a ledger deleted, emptied or swapped under a data dir is told
 *   apart from a new data dir.
 * - `runs.output_lost`: why a command run's output could not be written (null: it was).
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m005Owner: Migration = {
  version: 5,
  name: 'owner',
  sql: `
CREATE TABLE owner (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  boot_id      TEXT    NOT NULL,
  pid          INTEGER NOT NULL,
  pid_start    TEXT,
  host         TEXT    NOT NULL,
  started_at   INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
);
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
ALTER TABLE runs ADD COLUMN output_lost TEXT;
`,
};
