/**
 * Numbered schema migrations of the SQLite store. Each lives in
 * `migrations/NNN_name.ts` as a string constant, so neither the tsc output nor
 * the esbuild bundle needs SQL files at run time. Append new ones to
 * {@link SQLITE_MIGRATIONS}; never edit a released one.
 */
import type Database from 'better-sqlite3';
import { m001Init } from './migrations/001_init.js';
import { m002Claims } from './migrations/002_claims.js';
import { m003Commands } from './migrations/003_commands.js';
import { m004Notifications } from './migrations/004_notifications.js';
import { m005Owner } from './migrations/005_owner.js';
import { m006HostRuns } from './migrations/006_host_runs.js';
import { m007Backfills } from './migrations/007_backfills.js';
import { m008DeadLetters } from './migrations/008_dead_letters.js';
import { m009Freezes } from './migrations/009_freezes.js';
import { m010Skips } from './migrations/010_skips.js';
import { m016RunParams } from './migrations/016_run_params.js';
import { m013Access } from './migrations/013_access.js';
import { SchemaTooNewError, type Migration } from './migrations/migration.js';

export { SchemaTooNewError } from './migrations/migration.js';

export type { Migration } from './migrations/migration.js';

/** Every SQLite migration, ascending by version. */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  m001Init,
  m002Claims,
  m003Commands,
  m004Notifications,
  m005Owner,
  m006HostRuns,
  m007Backfills,
  m008DeadLetters,
  m009Freezes,
  m010Skips,
  m013Access,
  m016RunParams,
];

/** One row of `schema_migrations`. */
export interface AppliedMigration {
  version: number;
  name: string;
  /** Epoch ms. */
  appliedAt: number;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at INTEGER NOT NULL
)`;

/**
 * Applies the pending migrations, each in its own `BEGIN IMMEDIATE`
 * transaction (so two processes migrating at once serialize, and a crash
 * leaves the schema at a whole version). Idempotent; returns the versions it
 * applied.
 * @throws {SchemaTooNewError} when the database knows a version this code does not.
 */
export function migrateSqlite(
  db: Database.Database,
  migrations: readonly Migration[] = SQLITE_MIGRATIONS,
  now: () => number = Date.now,
): number[] {
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const applied: number[] = [];
  db.transaction(() => {
    db.exec(CREATE_TABLE);
    const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as {
      v: number | null;
    };
    if ((row.v ?? 0) > known) throw new SchemaTooNewError(row.v ?? 0, known);
  }).immediate();
  const has = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').pluck();
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    db.transaction(() => {
      if (has.get(m.version) !== undefined) return;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        now(),
      );
      applied.push(m.version);
    }).immediate();
  }
  return applied;
}

/** The rows of `schema_migrations`, ascending. */
export function appliedMigrations(db: Database.Database): AppliedMigration[] {
  return db
    .prepare(
      'SELECT version, name, applied_at AS appliedAt FROM schema_migrations ORDER BY version',
    )
    .all() as AppliedMigration[];
}
