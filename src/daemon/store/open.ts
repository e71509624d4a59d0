/**
 * Opening the daemon's store (SPEC §7, §10): SQLite in the data dir by default, or a
 * PostgreSQL store shared by replicas. Problems come back as {@link StoreOpenError}s whose
 * message names the cause; the boot turns them into its own refusals.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../io/atomic.js';
import type { PostgresStore } from './postgres.js';
import type { SqliteStore } from './sqlite.js';

/** A store that cannot be opened (bad URL, schema too new, missing privilege, broken file). */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

/**
 * Opens and migrates the PostgreSQL store. An unreachable server is retried
 * with backoff (1 s … 30 s), each failure told to `onWaiting`; a schema from a
 * newer cronix, a missing privilege or a bad URL stops start-up.
 */
export async function openPgStore(
  url: string,
  onWaiting: (message: string) => void = () => undefined,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<PostgresStore> {
  const { PostgresStore } = await import('./postgres.js');
  const { PgStoreError } = await import('./pg/connect.js');
  let store: PostgresStore;
  try {
    store = PostgresStore.open(url, {
      onIdleError: (m) => onWaiting(`idle connection dropped: ${m}`),
    });
  } catch (err) {
    throw new StoreOpenError((err as Error).message);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await store.migrate();
      return store;
    } catch (err) {
      const message = (err as Error).message;
      const transient =
        err instanceof PgStoreError &&
        /refused|not found|timed out|reset|shutting down|starting up|terminat/.test(message);
      if (!transient) {
        await store.close();
        throw new StoreOpenError(message);
      }
      const delay = Math.min(30_000, 1000 * 2 ** (attempt - 1));
      onWaiting(`${message}; retrying in ${delay / 1000} s`);
      await sleep(delay);
    }
  }
}

/** How {@link openSqliteLedger} treats a data dir. */
export interface LedgerOpenOptions {
  /**
   * Start an empty ledger where the data dir shows one existed (its ledger missing, empty or
   * replaced): `serve --init-ledger`. Without it such a data dir is refused.
   */
  init?: boolean;
  /**
   * Files of the data dir that existed before this start (the API token, say): a data dir with
   * them had a ledger, whatever `ledger.id` says.
   */
  traces?: readonly string[];
}

/** The file recording which ledger a data dir holds (`meta.ledger_id`). */
export const LEDGER_ID_FILE = 'ledger.id';

function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

function readMarker(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** A ledger SQLite cannot read, named with the fix. */
function corrupt(path: string, what: string): StoreOpenError {
  return new StoreOpenError(
    `the ledger ${path} is damaged (${what.slice(0, 300)}); restore it from a backup, or move it ` +
      'aside and start an empty ledger with --init-ledger',
  );
}

/**
 * Opens the SQLite ledger of a data dir (`<data-dir>/ledger.sqlite`), migrated and checked
 * (SPEC §9 item 6): a ledger that is missing or empty where the data dir had one (its
 * `ledger.id`, or `traces`), or that is another ledger than the one `ledger.id` names, is
 * refused unless `init`; a damaged one (`PRAGMA quick_check`) is refused with the file named.
 */
export async function openSqliteLedger(
  dataDir: string,
  o: LedgerOpenOptions = {},
): Promise<SqliteStore> {
  const path = join(dataDir, 'ledger.sqlite');
  const markerPath = join(dataDir, LEDGER_ID_FILE);
  const marker = readMarker(markerPath);
  const size = sizeOf(path);
  if ((size === null || size === 0) && !o.init) {
    const signs = [
      ...(marker !== null ? [LEDGER_ID_FILE] : []),
      ...(o.traces ?? []).filter((t) => t !== LEDGER_ID_FILE),
    ];
    if (signs.length > 0)
      throw new StoreOpenError(
        `the ledger ${path} is ${size === null ? 'missing' : 'empty (0 bytes)'}, but this data ` +
          `dir had one (${signs.join(', ')} ${signs.length > 1 ? 'are' : 'is'} there): its runs ` +
          'and checkpoints are gone. Restore it from a backup, or start an empty ledger with ' +
          '--init-ledger (fires missed meanwhile are then not recorded)',
      );
  }
  const { openSqliteStore } = await import('./sqlite.js');
  let store: SqliteStore;
  try {
    store = await openSqliteStore(path);
  } catch (err) {
    const message = (err as Error).message;
    if (/not a database|malformed|corrupt/i.test(message)) throw corrupt(path, message);
    throw new StoreOpenError(`cannot open the ledger in ${dataDir}: ${message}`);
  }
  try {
    const check = store.quickCheck();
    if (check.length !== 1 || check[0] !== 'ok') throw corrupt(path, check.join('; '));
    const { id } = store.ledgerId(randomUUID);
    if (marker !== null && marker !== id && !o.init)
      throw new StoreOpenError(
        `the ledger ${path} is not the one this data dir had (${LEDGER_ID_FILE} names ${marker}, ` +
          `the file is ledger ${id}): it was replaced. Put the right file back, or accept this ` +
          'one with --init-ledger',
      );
    if (marker !== id) writeFileAtomic(markerPath, `${id}\n`, 0o600, { fsync: true });
    return store;
  } catch (err) {
    await store.close();
    if (err instanceof StoreOpenError) throw err;
    const message = (err as Error).message;
    if (/not a database|malformed|corrupt/i.test(message)) throw corrupt(path, message);
    throw new StoreOpenError(`cannot open the ledger in ${dataDir}: ${message}`);
  }
}
