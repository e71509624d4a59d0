/**
 * High-availability primitives on PostgreSQL (SPEC §10), each one statement
 * on the database's clock, never a replica's:
 *
 * - the leader lease: acquired and renewed by one upsert; the epoch grows by
 *   one whenever the lease passes to a holder that did not hold it live (a new
 *   holder, or the same one after it lapsed), so an epoch names one term;
 * - the replicas seen, and the database's clock for skew checks;
 * - commands: API mutations a standby writes for the leader to carry out, with
 *   LISTEN/NOTIFY to wake the leader and the waiting standby.
 */
import type pg from 'pg';

/** The lease as the database holds it. */
export interface LeaseRow {
  holder: string;
  epoch: number;
  /** Epoch ms, database clock. */
  expiresAt: number;
  /** When this holder's term began, epoch ms. */
  acquiredAt: number;
  /** The database's `now()` when read, epoch ms. */
  dbNow: number;
}

const MS = (col: string): string => `(extract(epoch from ${col}) * 1000)::bigint`;

/**
 * Takes or renews the lease for `holder` for `ttlMs`; null while another
 * holder's lease is live. A renewal keeps the epoch; any other acquisition
 * increments it.
 */
export async function acquireLease(
  db: pg.Pool | pg.PoolClient,
  holder: string,
  ttlMs: number,
): Promise<LeaseRow | null> {
  const { rows } = await db.query<LeaseRow>(
    `INSERT INTO lease AS l (name, holder, epoch, expires_at, acquired_at)
     VALUES ('leader', $1, 1, now() + make_interval(secs => $2::double precision / 1000), now())
     ON CONFLICT (name) DO UPDATE SET
       holder = EXCLUDED.holder,
       epoch = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > now()
                    THEN l.epoch ELSE l.epoch + 1 END,
       acquired_at = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > now()
                          THEN l.acquired_at ELSE now() END,
       expires_at = EXCLUDED.expires_at
     WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
     RETURNING holder, epoch, ${MS('expires_at')} AS "expiresAt",
       ${MS('acquired_at')} AS "acquiredAt", ${MS('now()')} AS "dbNow"`,
    [holder, ttlMs],
  );
  return rows[0] ?? null;
}

/** Ends `holder`'s term `epoch` now (SIGTERM); true when it was still held. */
export async function releaseLease(
  db: pg.Pool | pg.PoolClient,
  holder: string,
  epoch: number,
): Promise<boolean> {
  const r = await db.query(
    `UPDATE lease SET expires_at = now() WHERE name = 'leader' AND holder = $1 AND epoch = $2
     AND expires_at > now()`,
    [holder, epoch],
  );
  return r.rowCount === 1;
}

/** The lease, or null before anyone ever held it. */
export async function readLease(db: pg.Pool | pg.PoolClient): Promise<LeaseRow | null> {
  const { rows } = await db.query<LeaseRow>(
    `SELECT holder, epoch, ${MS('expires_at')} AS "expiresAt", ${MS('acquired_at')} AS "acquiredAt",
       ${MS('now()')} AS "dbNow" FROM lease WHERE name = 'leader'`,
  );
  return rows[0] ?? null;
}

/** Records that `replica` is alive in `role` (and forgets replicas unseen for a day). */
export async function touchReplica(
  db: pg.Pool | pg.PoolClient,
  replica: string,
  role: 'leader' | 'standby',
): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM replicas WHERE last_seen < now() - interval '1 day')
     INSERT INTO replicas (replica, last_seen, role) VALUES ($1, now(), $2)
     ON CONFLICT (replica) DO UPDATE SET last_seen = now(), role = EXCLUDED.role`,
    [replica, role],
  );
}

/** Replicas seen within `withinMs`, with when. */
export async function listReplicas(
  db: pg.Pool | pg.PoolClient,
  withinMs: number,
): Promise<{ replica: string; lastSeen: number; role: string }[]> {
  const { rows } = await db.query<{ replica: string; lastSeen: number; role: string }>(
    `SELECT replica, ${MS('last_seen')} AS "lastSeen", role FROM replicas
     WHERE last_seen > now() - make_interval(secs => $1::double precision / 1000)
     ORDER BY replica`,
    [withinMs],
  );
  return rows;
}

/**
 * The database clock minus this replica's, in ms, measured as the midpoint of
 * the round trip (positive: the database is ahead).
 */
export async function measureSkew(
  db: pg.Pool | pg.PoolClient,
  localNow: () => number,
): Promise<number> {
  const before = localNow();
  const { rows } = await db.query<{ now: number }>(`SELECT ${MS('clock_timestamp()')} AS now`);
  const after = localNow();
  return (rows[0]?.now ?? after) - (before + after) / 2;
}

/** One forwarded API mutation. */
export interface CommandRow {
  id: number;
  kind: string;
  payload: unknown;
  /** Age when read, ms (database clock). */
  ageMs: number;
}

/** The NOTIFY channel of a schema (one database may hold several deployments). */
export const channelOf = (schema: string): string => `cronix_${schema}`;

/** Writes a command for the leader and wakes it; returns the command id. */
export async function enqueueCommand(
  db: pg.Pool,
  channel: string,
  kind: string,
  payload: unknown,
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `WITH c AS (INSERT INTO commands (kind, payload) VALUES ($1, $2) RETURNING id)
     SELECT id, pg_notify($3, 'command:' || id) FROM c`,
    [kind, JSON.stringify(payload), channel],
  );
  return rows[0]!.id;
}

/** Pending commands, oldest first (the leader takes them one by one). */
export async function pendingCommands(db: pg.Pool, limit = 100): Promise<CommandRow[]> {
  const { rows } = await db.query<CommandRow>(
    `SELECT id, kind, payload, ${MS('now() - created_at')} AS "ageMs" FROM commands
     WHERE done_at IS NULL ORDER BY id LIMIT $1`,
    [limit],
  );
  return rows;
}

/** Stores a command's result and wakes whoever waits for it; false when it was done already. */
export async function completeCommand(
  db: pg.Pool,
  channel: string,
  id: number,
  result: unknown,
): Promise<boolean> {
  const r = await db.query(
    `WITH done AS (UPDATE commands SET done_at = now(), result = $2
                   WHERE id = $1 AND done_at IS NULL RETURNING id)
     SELECT pg_notify($3, 'done:' || id) FROM done`,
    [id, JSON.stringify(result), channel],
  );
  return r.rowCount === 1;
}

/** The result of a command once done, else undefined. */
export async function commandResult(db: pg.Pool, id: number): Promise<unknown> {
  const { rows } = await db.query<{ result: unknown; done: boolean }>(
    `SELECT result, done_at IS NOT NULL AS done FROM commands WHERE id = $1`,
    [id],
  );
  return rows[0]?.done ? rows[0].result : undefined;
}

/** Deletes commands done more than an hour ago. */
export async function pruneCommands(db: pg.Pool): Promise<void> {
  await db.query(`DELETE FROM commands WHERE done_at < now() - interval '1 hour'`);
}

/** Wakes listeners of the channel (a released lease: standbys try at once). */
export async function notify(db: pg.Pool, channel: string, message: string): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, message]);
}
