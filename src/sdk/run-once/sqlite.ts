/**
 * `runOnce` on SQLite through better-sqlite3: one `BEGIN IMMEDIATE` transaction (the database's
 * write lock, so deliveries in other processes on the same file wait for it) holds the check of
 * the run key, the fence check, `fn`'s writes and the success marker. `fn` runs inside a
 * savepoint: if it throws, its writes are rolled back and the row is marked `failed` in the same
 * transaction. better-sqlite3 is synchronous, so `fn` must be too (it gets the database).
 *
 * Only the structural parts of better-sqlite3 are used (no import of it).
 */
import {
  duplicate,
  errorText,
  executed,
  failure,
  num,
  runOf,
  staleFence,
  tableNames,
  valueBody,
  type RunOnceAnswer,
  type RunOnceOptions,
  type RunOnceRun,
} from './answer.js';
import type { HeaderSource } from '../trigger.js';

/** A better-sqlite3 `Database`. */
export interface SqliteDatabaseLike {
  prepare(sql: string): {
    run(...params: unknown[]): unknown;
    get(...params: unknown[]): unknown;
  };
  exec(sql: string): unknown;
  readonly inTransaction: boolean;
}

const ready = new WeakMap<object, Set<string>>();

function ensureTables(db: SqliteDatabaseLike, runs: string, fences: string): void {
  const done = ready.get(db) ?? new Set<string>();
  ready.set(db, done);
  if (done.has(runs)) return;
  db.exec(`CREATE TABLE IF NOT EXISTS ${runs} (
    run_key TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('received', 'started', 'succeeded', 'failed')),
    run_id TEXT,
    attempt INTEGER,
    leader_epoch INTEGER,
    fencing_token INTEGER,
    status_code INTEGER,
    result TEXT,
    error TEXT,
    duplicates INTEGER NOT NULL DEFAULT 0,
    first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_updated TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  );
  CREATE TABLE IF NOT EXISTS ${fences} (
    scope TEXT PRIMARY KEY,
    leader_epoch INTEGER,
    fencing_token INTEGER,
    last_updated TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  );`);
  done.add(runs);
}

const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;

function isThenable(v: unknown): boolean {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/**
 * Runs `fn` at most once per run key, on SQLite. `fn(db, run)` is synchronous and makes its
 * side effect through `db`. Verify the request's signature first.
 */
export function runOnceSqlite<T>(
  db: SqliteDatabaseLike,
  request: { headers: HeaderSource },
  fn: (db: SqliteDatabaseLike, run: RunOnceRun) => T,
  opts?: RunOnceOptions,
): RunOnceAnswer<T> {
  const { runs, fences } = tableNames(opts);
  const run = runOf(request);
  if (!('runKey' in run)) return run;
  if (db.inTransaction) {
    throw new TypeError('runOnce: the database is inside a transaction already; call it outside');
  }
  ensureTables(db, runs, fences);
  const { runKey, scope, trigger } = run;
  db.prepare(
    `INSERT OR IGNORE INTO ${runs} (run_key, scope, state, run_id, attempt, leader_epoch, fencing_token)
     VALUES (?, ?, 'received', ?, ?, ?, ?)`,
  ).run(runKey, scope, trigger.runId, trigger.attempt, trigger.leaderEpoch, trigger.fencingToken);
  db.exec('BEGIN IMMEDIATE');
  try {
    const answer = inTransaction(db, run, fn, runs, fences);
    db.exec('COMMIT');
    return answer;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/**
 * Checks the delivery's epoch and token against the job's fence: an older one is answered
 * `stale`; otherwise the fence is raised to them (it only grows). A delivery with neither passes.
 * Runs inside the caller's transaction.
 */
function fence(
  db: SqliteDatabaseLike,
  fences: string,
  { scope, trigger }: RunOnceRun,
): RunOnceAnswer<never> | null {
  if (trigger.leaderEpoch === null && trigger.fencingToken === null) return null;
  db.prepare(`INSERT OR IGNORE INTO ${fences} (scope) VALUES (?)`).run(scope);
  const seen = db
    .prepare(`SELECT leader_epoch, fencing_token FROM ${fences} WHERE scope = ?`)
    .get(scope) as Record<string, unknown> | undefined;
  const stale = staleFence(trigger, {
    leaderEpoch: num(seen?.['leader_epoch']),
    fencingToken: num(seen?.['fencing_token']),
  });
  if (stale !== null) return stale;
  // max() of SQLite returns NULL when an argument is NULL: coalesce both sides
  db.prepare(
    `UPDATE ${fences} SET
       leader_epoch = max(coalesce(leader_epoch, @epoch), coalesce(@epoch, leader_epoch)),
       fencing_token = max(coalesce(fencing_token, @token), coalesce(@token, fencing_token)),
       last_updated = ${NOW}
     WHERE scope = @scope`,
  ).run({ epoch: trigger.leaderEpoch, token: trigger.fencingToken, scope });
  return null;
}

function inTransaction<T>(
  db: SqliteDatabaseLike,
  run: RunOnceRun,
  fn: (db: SqliteDatabaseLike, run: RunOnceRun) => T,
  runs: string,
  fences: string,
): RunOnceAnswer<T> {
  const { runKey, trigger } = run;
  const row = db
    .prepare(`SELECT state, status_code, result FROM ${runs} WHERE run_key = ?`)
    .get(runKey) as Record<string, unknown> | undefined;
  if (row?.['state'] === 'succeeded') {
    db.prepare(
      `UPDATE ${runs} SET duplicates = duplicates + 1, last_updated = ${NOW} WHERE run_key = ?`,
    ).run(runKey);
    // a duplicate still raises the fence: a new leader's duplicate fences the deposed one out
    // of the next fire (the answer stays the stored one either way)
    fence(db, fences, run);
    return duplicate(num(row['status_code']) ?? 200, String(row['result'] ?? 'null'));
  }
  const stale = fence(db, fences, run);
  if (stale !== null) return stale;
  db.prepare(
    `UPDATE ${runs} SET state = 'started', run_id = ?, attempt = ?, leader_epoch = ?,
       fencing_token = ?, last_updated = ${NOW} WHERE run_key = ?`,
  ).run(trigger.runId, trigger.attempt, trigger.leaderEpoch, trigger.fencingToken, runKey);
  db.exec('SAVEPOINT cronix_run_once');
  let value: T;
  try {
    value = fn(db, run);
    if (isThenable(value)) {
      throw new TypeError(
        'runOnce: better-sqlite3 transactions are synchronous; fn must not return a promise',
      );
    }
    db.exec('RELEASE cronix_run_once');
  } catch (err) {
    db.exec('ROLLBACK TO cronix_run_once');
    db.exec('RELEASE cronix_run_once');
    db.prepare(
      `UPDATE ${runs} SET state = 'failed', error = ?, last_updated = ${NOW} WHERE run_key = ?`,
    ).run(errorText(err), runKey);
    if (err instanceof TypeError && err.message.startsWith('runOnce:')) throw err;
    return failure(500, 'failed', 'RunFailed', 'the run failed and was rolled back; retry it');
  }
  const body = valueBody(value);
  db.prepare(
    `UPDATE ${runs} SET state = 'succeeded', status_code = 200, result = ?, error = NULL,
       last_updated = ${NOW} WHERE run_key = ?`,
  ).run(body, runKey);
  return executed(value, body);
}
