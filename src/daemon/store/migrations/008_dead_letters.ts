/**
 * Migration 008 (SPEC §16): dead letters.
 *
 * - `dismissals`: a dead letter dismissed by an operator — its run, the note, who and when.
 * - `runs (run_key, seq)`: the dead-letter view looks for a newer run of the same key.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m008DeadLetters: Migration = {
  version: 8,
  name: 'dead_letters',
  sql: `
CREATE TABLE dismissals (
  run_id       TEXT PRIMARY KEY,
  note         TEXT NOT NULL,
  dismissed_by TEXT NOT NULL,
  dismissed_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX runs_run_key_seq ON runs (run_key, seq);
`,
};
