/**
 * PostgreSQL migration 004 (SPEC §10, high availability):
 *
 * - `lease.incarnation`: the process (and its one attempt to lead) holding the
 *   lease. A renewal keeps the epoch only for the same replica **and**
 *   incarnation, so a replica restarted under the same `--replica-id`, or a
 *   frozen old process woken after its replacement started, never leads under
 *   another process's epoch.
 * - `lease.previous_expires_at`: when the previous term's lease ran out; with
 *   `acquired_at` it tells a new leader how long no one led.
 * - `commands.state` (`pending` → `taken` → `done`, or `pending` → `abandoned`),
 *   `taken_epoch`, `taken_at`: a command is taken by the leader or withdrawn by
 *   its sender with a compare-and-set from `pending`, never both. Withdrawn
 *   commands get `done_at` too, so a replica of an older cronix, which takes
 *   whatever has no `done_at`, never carries one out.
 * - `runs.leader_epoch`: the epoch of the term that last wrote the row (null
 *   for unfenced writes), from the transaction's `cronix.epoch` setting that the
 *   fenced store sets with its fence check: the column's default for inserts,
 *   set by every update of `pg/write.ts`. The ledger itself shows which term
 *   wrote what. (A column default, not a trigger: a trigger costs 2–3× on a
 *   10,000-row insert.)
 */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg004Incarnations: Migration = {
  version: 4,
  name: 'incarnations',
  sql: `
ALTER TABLE lease ADD COLUMN incarnation TEXT NOT NULL DEFAULT '';
ALTER TABLE lease ADD COLUMN previous_expires_at TIMESTAMPTZ;

ALTER TABLE commands ADD COLUMN state TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE commands ADD COLUMN taken_epoch BIGINT;
ALTER TABLE commands ADD COLUMN taken_at TIMESTAMPTZ;
UPDATE commands SET state = 'done' WHERE done_at IS NOT NULL;
DROP INDEX commands_pending;
CREATE INDEX commands_pending ON commands (id) WHERE state = 'pending';
CREATE INDEX commands_finished ON commands (done_at) WHERE done_at IS NOT NULL;

ALTER TABLE runs ADD COLUMN leader_epoch BIGINT
  DEFAULT NULLIF(current_setting('cronix.epoch', true), '')::bigint;
`,
};
