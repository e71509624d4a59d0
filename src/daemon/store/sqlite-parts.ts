/**
 * The parts of the SQLite store (`sqlite.ts`), one per feature, each on the store's
 * connection: notifications, tokens and audit, host-mode runs, backfills, dead letters,
 * freezes, idempotency keys and skipped instants. Made once the schema exists (`migrate`).
 */
import type Database from 'better-sqlite3';
import { SqliteAccess } from './sqlite-access.js';
import { SqliteBackfills } from './sqlite-backfills.js';
import { SqliteDeadLetters } from './sqlite-dead-letters.js';
import { SqliteFreezes } from './sqlite-freezes.js';
import { SqliteHostRuns } from './sqlite-host.js';
import { SqliteIdempotency } from './sqlite-idempotency.js';
import { SqliteNotifications } from './sqlite-notifications.js';
import { SqliteSkips } from './sqlite-skips.js';
import type { Prepared } from './sqlite-sql.js';

/** See the module comment. */
export interface SqliteParts {
  notifications: SqliteNotifications;
  access: SqliteAccess;
  host: SqliteHostRuns;
  backfills: SqliteBackfills;
  deadLetters: SqliteDeadLetters;
  freezes: SqliteFreezes;
  idempotency: SqliteIdempotency;
  skips: SqliteSkips;
}

/** Every part, on `db` and the store's prepared statements, in this order. */
export function makeParts(db: Database.Database, stmts: Prepared): SqliteParts {
  return {
    notifications: new SqliteNotifications(db),
    access: new SqliteAccess(db),
    host: new SqliteHostRuns(db, stmts),
    backfills: new SqliteBackfills(db),
    deadLetters: new SqliteDeadLetters(db),
    freezes: new SqliteFreezes(db),
    idempotency: new SqliteIdempotency(db),
    skips: new SqliteSkips(db),
  };
}
