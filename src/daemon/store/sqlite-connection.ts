/**
 * The connection of the SQLite store (`sqlite.ts`, docs/store.md): its options, the
 * durability pragmas applied when the file is opened, the owner-checked write transaction,
 * and what SQLite reports back — the settings in effect, `quick_check` and `integrity_check`.
 */
import type Database from 'better-sqlite3';

/** Options of `SqliteStore`. */
export interface SqliteStoreOptions {
  /** How long a write waits for another connection's lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** Clock for `schema_migrations.applied_at`. Default `Date.now`. */
  now?: () => number;
}

/** The connection settings in effect, as SQLite reports them. */
export interface SqliteSettings {
  /** `wal` for a file database. */
  journalMode: string;
  /** 2 = FULL. */
  synchronous: number;
  busyTimeoutMs: number;
  foreignKeys: boolean;
  /** The page cache's bound, in KiB ({@link PAGE_CACHE_KIB}). */
  cacheKib: number;
}

/**
 * The connection's page cache, in KiB: SQLite's own default (2 MB). better-sqlite3 builds SQLite
 * with a 16 MB default, and a ledger fills it: 10,000 runs planned for one instant grew the
 * daemon's malloc heap by 10 MB more than this bound does, for the life of the process
 * (BENCHMARKS.md). Pages beyond it are read back from the OS's file cache; the ledger bench's
 * runs per second were the same either way.
 */
export const PAGE_CACHE_KIB = 2000;

/**
 * WAL with `synchronous = FULL`, the busy timeout (default 5000 ms), foreign keys on, a 2 MB page
 * cache.
 */
export function applyPragmas(db: Database.Database, busyTimeoutMs: number | undefined): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs ?? 5000))}`);
  db.pragma('foreign_keys = ON');
  // keep the WAL file from staying huge after a large tick
  db.pragma('journal_size_limit = 67108864');
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
}

/**
 * Runs `work` in one `BEGIN IMMEDIATE` transaction, after the owner's check when the store has
 * an owner (`sqlite-owner.ts`).
 */
export function ownedTransaction<T>(
  db: Database.Database,
  owner: { check(): void } | null,
  work: () => T,
): T {
  return db
    .transaction(() => {
      owner?.check();
      return work();
    })
    .immediate();
}

/** The connection's durability settings as SQLite reports them (diagnostics, tests). */
export function readSettings(db: Database.Database): SqliteSettings {
  return {
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: Number(db.pragma('synchronous', { simple: true })),
    busyTimeoutMs: Number(db.pragma('busy_timeout', { simple: true })),
    foreignKeys: Number(db.pragma('foreign_keys', { simple: true })) === 1,
    cacheKib: -Number(db.pragma('cache_size', { simple: true })),
  };
}

/** `PRAGMA quick_check`: `['ok']` for a sound file, else SQLite's complaints. */
export function quickCheck(db: Database.Database): string[] {
  const rows = db.pragma('quick_check') as { quick_check: string }[];
  return rows.map((r) => r.quick_check);
}

/** `PRAGMA integrity_check`: `['ok']` for a sound file, else SQLite's complaints. */
export function integrityCheck(db: Database.Database): string[] {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check);
}
