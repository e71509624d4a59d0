/**
 * `runOnce` on PostgreSQL through node-postgres (`pg`): the run key's row in the idempotency
 * table and `fn`'s writes commit in one transaction, so a side effect made through the client is
 * there exactly when the success marker is.
 *
 * Deliveries of one run key are serialized by a session advisory lock on the run key (held on
 * the connection, so a crashed process releases it). Under it:
 * 1. the row says `succeeded` → the stored answer, `fn` does not run (`duplicate`);
 * 2. the job's fence row (highest leader epoch and fencing token seen) is checked and raised in
 *    its own transaction; an older epoch or token is answered 409 (`stale`);
 * 3. the row is marked `started` (committed: a run that dies mid-way stays visible as such);
 * 4. `BEGIN`, `fn(client)`, the row set `succeeded` with the answer, `COMMIT`. If `fn` throws,
 *    `ROLLBACK` and the row is marked `failed`; a later delivery runs it again.
 *
 * Only the structural parts of `pg` are used (no import of it): a `Pool` or a `Client`.
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

/** A connection: `pg.Client` or a client checked out of a `pg.Pool`. */
export interface PgClientLike {
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

/** A `pg.Pool`. */
export interface PgPoolLike {
  connect(): Promise<PgClientLike & { release(err?: Error | boolean): void }>;
}

/** What a `pg` client has of an event emitter. */
interface Listening {
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeListener(event: 'error', listener: (err: Error) => void): unknown;
}

const ready = new WeakMap<object, Set<string>>();

async function ensureTables(client: PgClientLike, owner: object, runs: string, fences: string) {
  const done = ready.get(owner) ?? new Set<string>();
  ready.set(owner, done);
  if (done.has(runs)) return;
  // concurrent CREATE TABLE IF NOT EXISTS can still collide on the catalog: one at a time
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `cronix-run-once-ddl:${runs}`,
    ]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${runs} (
        run_key text PRIMARY KEY,
        scope text NOT NULL,
        state text NOT NULL CHECK (state IN ('received', 'started', 'succeeded', 'failed')),
        run_id text,
        attempt integer,
        leader_epoch bigint,
        fencing_token bigint,
        status_code integer,
        result text,
        error text,
        duplicates integer NOT NULL DEFAULT 0,
        first_seen timestamptz NOT NULL DEFAULT now(),
        last_updated timestamptz NOT NULL DEFAULT now()
      )`,
    );
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${fences} (
        scope text PRIMARY KEY,
        leader_epoch bigint,
        fencing_token bigint,
        last_updated timestamptz NOT NULL DEFAULT now()
      )`,
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  done.add(runs);
}

/** A `pg.Pool` (it counts its clients); a `pg.Client` has `connect` too, but opens itself with it. */
function isPool(db: PgPoolLike | PgClientLike): db is PgPoolLike {
  return (
    typeof (db as Partial<PgPoolLike>).connect === 'function' &&
    typeof (db as { totalCount?: unknown }).totalCount === 'number'
  );
}

/**
 * Runs `fn` at most once per run key, on PostgreSQL. `fn` gets the client inside the open
 * transaction: make the side effect through it (never COMMIT or use another connection of the
 * same pool — waiting deliveries may hold the others). Verify the request's signature first.
 */
export async function runOncePg<T>(
  db: PgPoolLike | PgClientLike,
  request: { headers: HeaderSource },
  fn: (client: PgClientLike, run: RunOnceRun) => Promise<T> | T,
  opts?: RunOnceOptions,
): Promise<RunOnceAnswer<T>> {
  const { runs, fences } = tableNames(opts);
  const run = runOf(request);
  if (!('runKey' in run)) return run;
  const pooled = isPool(db) ? await db.connect() : null;
  const client: PgClientLike = pooled ?? (db as PgClientLike);
  // pg-pool hears the errors of idle connections only: a session the server ends while this one
  // is checked out (a failover, an administrator, a timeout) would emit an `error` nobody hears,
  // which ends the app; heard here, it fails the next statement and so this delivery
  const events = pooled as Partial<Listening> | null;
  const heard = (): void => undefined;
  events?.on?.('error', heard);
  let broken: Error | undefined;
  try {
    await ensureTables(client, db, runs, fences);
    return await underLock(client, run, fn, runs, fences);
  } catch (err) {
    broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    events?.removeListener?.('error', heard);
    pooled?.release(broken);
  }
}

async function underLock<T>(
  client: PgClientLike,
  run: RunOnceRun,
  fn: (client: PgClientLike, run: RunOnceRun) => Promise<T> | T,
  runs: string,
  fences: string,
): Promise<RunOnceAnswer<T>> {
  const { runKey, scope, trigger } = run;
  await client.query(
    `INSERT INTO ${runs} (run_key, scope, state, run_id, attempt, leader_epoch, fencing_token)
     VALUES ($1, $2, 'received', $3, $4, $5, $6) ON CONFLICT (run_key) DO NOTHING`,
    [runKey, scope, trigger.runId, trigger.attempt, trigger.leaderEpoch, trigger.fencingToken],
  );
  const lockKey = `cronix-run-once:${runs}:${runKey}`;
  await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey]);
  try {
    const row = (
      await client.query(`SELECT state, status_code, result FROM ${runs} WHERE run_key = $1`, [
        runKey,
      ])
    ).rows[0];
    if (row?.['state'] === 'succeeded') {
      await client.query(
        `UPDATE ${runs} SET duplicates = duplicates + 1, last_updated = now() WHERE run_key = $1`,
        [runKey],
      );
      // a duplicate still raises the fence: a new leader's duplicate fences the deposed one
      // out of the next fire (the answer stays the stored one either way)
      await checkFence(client, fences, run);
      return duplicate(num(row['status_code']) ?? 200, String(row['result'] ?? 'null'));
    }
    const stale = await checkFence(client, fences, run);
    if (stale !== null) return stale;
    await client.query(
      `UPDATE ${runs} SET state = 'started', run_id = $2, attempt = $3, leader_epoch = $4,
         fencing_token = $5, last_updated = now() WHERE run_key = $1`,
      [runKey, trigger.runId, trigger.attempt, trigger.leaderEpoch, trigger.fencingToken],
    );
    await client.query('BEGIN');
    let value: T;
    try {
      value = await fn(client, run);
    } catch (err) {
      await client.query('ROLLBACK');
      await client.query(
        `UPDATE ${runs} SET state = 'failed', error = $2, last_updated = now() WHERE run_key = $1`,
        [runKey, errorText(err)],
      );
      return failure(500, 'failed', 'RunFailed', 'the run failed and was rolled back; retry it');
    }
    const body = valueBody(value);
    try {
      await client.query(
        `UPDATE ${runs} SET state = 'succeeded', status_code = 200, result = $2, error = NULL,
           last_updated = now() WHERE run_key = $1`,
        [runKey, body],
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    return executed(value, body);
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey]);
  }
}

/** Checks the request's epoch and token against the job's fence and raises it (committed). */
async function checkFence(
  client: PgClientLike,
  fences: string,
  run: RunOnceRun,
): Promise<RunOnceAnswer<never> | null> {
  const { leaderEpoch, fencingToken } = run.trigger;
  if (leaderEpoch === null && fencingToken === null) return null;
  await client.query('BEGIN');
  try {
    await client.query(`INSERT INTO ${fences} (scope) VALUES ($1) ON CONFLICT DO NOTHING`, [
      run.scope,
    ]);
    const seen = (
      await client.query(
        `SELECT leader_epoch, fencing_token FROM ${fences} WHERE scope = $1 FOR UPDATE`,
        [run.scope],
      )
    ).rows[0];
    const stale = staleFence(run.trigger, {
      leaderEpoch: num(seen?.['leader_epoch']),
      fencingToken: num(seen?.['fencing_token']),
    });
    if (stale === null) {
      await client.query(
        `UPDATE ${fences} SET leader_epoch = GREATEST(leader_epoch, $2::bigint),
           fencing_token = GREATEST(fencing_token, $3::bigint), last_updated = now()
         WHERE scope = $1`,
        [run.scope, leaderEpoch, fencingToken],
      );
    }
    await client.query('COMMIT');
    return stale;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
