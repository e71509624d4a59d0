/**
 * The leader lease and the replicas seen, on PostgreSQL (SPEC §10), each one
 * statement on the database's clock, never a replica's. The lease is one row
 * `lease('leader', holder, incarnation, epoch, expires_at, acquired_at,
 * previous_expires_at)`, taken and renewed by one upsert: the epoch grows by
 * one whenever the lease passes to a claimant that did not hold it live — a
 * new replica, a new process (incarnation) of the same replica, or the same
 * one after it lapsed — so an epoch names one term of one process.
 */
import type pg from 'pg';
import type { Claimant, Lease, LeaseAttempt, ReplicaSeen } from '../coordination.js';

type Db = pg.Pool | pg.PoolClient;

/** Epoch milliseconds of a `timestamptz` expression. */
export const MS = (col: string): string => `(extract(epoch from ${col}) * 1000)::bigint`;

const LEASE_COLUMNS = `holder AS replica, incarnation, epoch, ${MS('expires_at')} AS "expiresAt",
  ${MS('acquired_at')} AS "acquiredAt", ${MS('previous_expires_at')} AS "previousExpiresAt",
  ${MS('now()')} AS "storeNow"`;

/** The claimant holds the lease live: a renewal, which keeps the epoch and the term's start. */
const RENEWAL = `l.holder = EXCLUDED.holder AND l.incarnation = EXCLUDED.incarnation
  AND l.expires_at > now()`;

/**
 * The upsert, and the lease as it was when the claimant did not win (a
 * data-modifying CTE's outer query sees the row from before the statement).
 */
const ACQUIRE_SQL = `
WITH won AS (
  INSERT INTO lease AS l (name, holder, incarnation, epoch, expires_at, acquired_at)
  VALUES ('leader', $1, $2, 1, now() + make_interval(secs => $3::double precision / 1000), now())
  ON CONFLICT (name) DO UPDATE SET
    holder = EXCLUDED.holder,
    incarnation = EXCLUDED.incarnation,
    epoch = CASE WHEN ${RENEWAL} THEN l.epoch ELSE l.epoch + 1 END,
    acquired_at = CASE WHEN ${RENEWAL} THEN l.acquired_at ELSE now() END,
    previous_expires_at = CASE WHEN ${RENEWAL} THEN l.previous_expires_at ELSE l.expires_at END,
    expires_at = EXCLUDED.expires_at
  WHERE (l.holder = EXCLUDED.holder AND l.incarnation = EXCLUDED.incarnation)
     OR l.expires_at <= now()
  RETURNING ${LEASE_COLUMNS}
)
SELECT true AS won, * FROM won
UNION ALL
SELECT false AS won, ${LEASE_COLUMNS} FROM lease
WHERE name = 'leader' AND NOT EXISTS (SELECT 1 FROM won)`;

/** Takes or renews the lease for `claimant` for `ttlMs` (see {@link Coordination.acquireLease}). */
export async function acquireLease(
  db: Db,
  claimant: Claimant,
  ttlMs: number,
): Promise<LeaseAttempt> {
  // Two tries: when another claimant's first INSERT of the row commits while this statement
  // runs, the ON CONFLICT path sees that row (and does not win) but the SELECT, on the
  // statement's snapshot, does not: no row at all. The next statement's snapshot has it.
  for (let attempt = 0; attempt < 2; attempt++) {
    const { rows } = await db.query<Lease & { won: boolean }>(ACQUIRE_SQL, [
      claimant.replica,
      claimant.incarnation,
      ttlMs,
    ]);
    const row = rows[0];
    if (row) {
      const { won, ...lease } = row;
      return { won, lease };
    }
  }
  throw new Error('the lease statement returned no row');
}

/** Ends `claimant`'s term `epoch` now and wakes `channel`'s listeners; true when it was held. */
export async function releaseLease(
  db: Db,
  claimant: Claimant,
  epoch: number,
  channel: string,
): Promise<boolean> {
  const r = await db.query(
    `WITH released AS (
       UPDATE lease SET expires_at = now() WHERE name = 'leader' AND holder = $1
       AND incarnation = $2 AND epoch = $3 AND expires_at > now() RETURNING 1)
     SELECT pg_notify($4, 'released') FROM released`,
    [claimant.replica, claimant.incarnation, epoch, channel],
  );
  return r.rowCount === 1;
}

/** The lease, or null before anyone ever held it. */
export async function readLease(db: Db): Promise<Lease | null> {
  const { rows } = await db.query<Lease>(
    `SELECT ${LEASE_COLUMNS} FROM lease WHERE name = 'leader'`,
  );
  return rows[0] ?? null;
}

/** Records that `replica` is alive in `role` (and forgets replicas unseen for a day). */
export async function touchReplica(
  db: Db,
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
export async function listReplicas(db: Db, withinMs: number): Promise<ReplicaSeen[]> {
  const { rows } = await db.query<ReplicaSeen>(
    `SELECT replica, ${MS('last_seen')} AS "lastSeen", role FROM replicas
     WHERE last_seen > now() - make_interval(secs => $1::double precision / 1000)
     ORDER BY replica`,
    [withinMs],
  );
  return rows;
}

/** The database's clock now (`clock_timestamp()`, not the transaction's start). */
export async function storeNow(db: Db): Promise<number> {
  const { rows } = await db.query<{ now: number }>(`SELECT ${MS('clock_timestamp()')} AS now`);
  const now = rows[0]?.now;
  if (now === undefined) throw new Error('the database returned no time');
  return now;
}
