/**
 * Exactly-once on the app side (the playbook's correctness boundary): the run key claimed in an
 * idempotency table, the side effect and the success marker committed together, a duplicate
 * delivery answered with the stored answer, a deposed leader's or lock loser's delivery refused.
 * `runOnce` picks the store by the handle it is given: a better-sqlite3 `Database`, or a `pg`
 * `Pool` / `Client`. Neither driver is imported: they are optional peers of the SDK.
 */
import type { HeaderSource } from '../trigger.js';
import type { RunOnceAnswer, RunOnceOptions, RunOnceRun } from './answer.js';
import { runOncePg, type PgClientLike, type PgPoolLike } from './pg.js';
import { runOnceSqlite, type SqliteDatabaseLike } from './sqlite.js';

export {
  answerResponse,
  RUN_ONCE_HEADER,
  type RunOnceAnswer,
  type RunOnceOptions,
  type RunOnceOutcome,
  type RunOnceRun,
  type RunOnceState,
} from './answer.js';
export { runOncePg, type PgClientLike, type PgPoolLike } from './pg.js';
export { runOnceSqlite, type SqliteDatabaseLike } from './sqlite.js';

function isSqlite(db: unknown): db is SqliteDatabaseLike {
  const d = db as Partial<SqliteDatabaseLike>;
  return typeof d.prepare === 'function' && typeof d.inTransaction === 'boolean';
}

/**
 * Runs `fn` at most once per run key (from the request's `X-Cron-Run-Key`) and returns the
 * answer to send: `executed` 200 with `fn`'s value as JSON, `duplicate` with the stored status
 * and body, `stale` 409, `failed` 500 (rolled back; the sender retries), `invalid` 400.
 * Verify the request's signature before calling it.
 *
 * SQLite (better-sqlite3): `fn(db, run)` is synchronous. PostgreSQL (`pg`): `fn(client, run)`
 * may be async and must write through `client`, which is inside the transaction.
 */
export function runOnce<T>(
  db: SqliteDatabaseLike,
  request: { headers: HeaderSource },
  fn: (db: SqliteDatabaseLike, run: RunOnceRun) => T,
  opts?: RunOnceOptions,
): Promise<RunOnceAnswer<T>>;
export function runOnce<T>(
  db: PgPoolLike | PgClientLike,
  request: { headers: HeaderSource },
  fn: (client: PgClientLike, run: RunOnceRun) => Promise<T> | T,
  opts?: RunOnceOptions,
): Promise<RunOnceAnswer<T>>;
export async function runOnce<T>(
  db: SqliteDatabaseLike | PgPoolLike | PgClientLike,
  request: { headers: HeaderSource },
  fn: (db: never, run: RunOnceRun) => Promise<T> | T,
  opts?: RunOnceOptions,
): Promise<RunOnceAnswer<T>> {
  if (isSqlite(db)) {
    return runOnceSqlite(db, request, fn as (db: SqliteDatabaseLike, run: RunOnceRun) => T, opts);
  }
  if (typeof (db as Partial<PgClientLike>).query === 'function') {
    return runOncePg(
      db as PgPoolLike | PgClientLike,
      request,
      fn as (client: PgClientLike, run: RunOnceRun) => Promise<T> | T,
      opts,
    );
  }
  throw new TypeError(
    'runOnce: db must be a better-sqlite3 Database or a pg Pool or Client (found neither prepare() nor query())',
  );
}
