/**
 * Numbered migrations of the PostgreSQL store, applied at start-up in one
 * transaction under an advisory lock on the schema's name, so replicas starting
 * together serialize and a crash leaves the schema at a whole version. A schema
 * written by a newer cronix is refused, naming both versions. Append new
 * migrations; never edit a released one.
 */
import type pg from 'pg';
import { SchemaTooNewError, type Migration } from '../migrations/migration.js';
import { pg001Init } from './001_init.js';
import { pg002Commands } from './002_commands.js';
import { pg003Notifications } from './003_notifications.js';
import { pg004Incarnations } from './004_incarnations.js';
import { pg005OutputLost } from './005_output_lost.js';
import { pg006HostRuns } from './006_host_runs.js';
import { pg007Backfills } from './007_backfills.js';
import { pg008DeadLetters } from './008_dead_letters.js';
import { pg009Freezes } from './009_freezes.js';
import { pg010Skips } from './010_skips.js';
import { pg016RunParams } from './016_run_params.js';
import { pg013Access } from './013_access.js';
import { ident } from './connect.js';

/** Every PostgreSQL migration, ascending by version. */
export const PG_MIGRATIONS: readonly Migration[] = [
  pg001Init,
  pg002Commands,
  pg003Notifications,
  pg004Incarnations,
  pg005OutputLost,
  pg006HostRuns,
  pg007Backfills,
  pg008DeadLetters,
  pg009Freezes,
  pg010Skips,
  pg013Access,
  pg016RunParams,
];

/**
 * Creates the schema if needed and applies the pending migrations; returns
 * the versions applied. Idempotent.
 * @throws {SchemaTooNewError} when the schema knows a version this build does not.
 */
export async function migratePg(
  client: pg.PoolClient | pg.Client,
  schema: string,
  now: () => number = Date.now,
  migrations: readonly Migration[] = PG_MIGRATIONS,
): Promise<number[]> {
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`cronix-migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${ident(schema)}.schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT    NOT NULL,
      applied_at BIGINT  NOT NULL
    )`);
    const { rows } = await client.query<{ version: number }>(
      `SELECT version FROM ${ident(schema)}.schema_migrations`,
    );
    const done = new Set(rows.map((r) => r.version));
    const current = Math.max(0, ...done);
    if (current > known) throw new SchemaTooNewError(current, known);
    // each version once, whether or not a higher one is there (numbers are handed out per
    // branch of work, so 7 may have been applied before 6 existed; SQLite's migrate does the same)
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await client.query(`SET LOCAL search_path TO ${ident(schema)}`);
      await client.query(m.sql);
      await client.query(
        `INSERT INTO ${ident(schema)}.schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
        [m.version, m.name, now()],
      );
      applied.push(m.version);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return applied;
}
