/**
 * The notification outbox of the PostgreSQL store (SPEC §12; the seam is
 * {@link NotificationStore}). Writes run in the store's fenced transaction: the
 * job's groups are read `FOR UPDATE`, so two writers serialize per job, and a
 * deposed leader's event is refused with its epoch — in a cluster only the
 * leader notifies, and each event once.
 */
import type pg from 'pg';
import { clampListLimit } from '../limits.js';
import type {
  NotificationFilter,
  NotificationPatch,
  NotificationRecord,
  NotifyGroupRow,
  NotifyPlan,
} from '../types.js';

const COLUMNS = `seq::float8 AS seq, id, event_key AS "eventKey", event, app, job,
  run_id AS "runId", notifier, notifier_type AS "notifierType", count, text, body, status,
  attempts, last_status AS "lastStatus", last_error AS "lastError",
  created_at::float8 AS "createdAt", next_attempt_at::float8 AS "nextAttemptAt",
  ended_at::float8 AS "endedAt"`;

type Db = Pick<pg.PoolClient, 'query'>;

/** Reads the groups, plans, writes groups and notifications (in the caller's transaction). */
export async function recordPg(
  client: Db,
  app: string,
  job: string,
  plan: (groups: NotifyGroupRow[]) => NotifyPlan,
): Promise<NotificationRecord[]> {
  const { rows } = await client.query<{
    notifier: string;
    kind: 'failed' | 'missed';
    lastSentAt: number | null;
    suppressed: number;
    total: number;
  }>(
    `SELECT notifier, kind, last_sent_at::float8 AS "lastSentAt", suppressed, total
     FROM notify_groups WHERE app = $1 AND job = $2 ORDER BY notifier, kind FOR UPDATE`,
    [app, job],
  );
  const decided = plan(
    rows.map((r) => ({
      notifier: r.notifier,
      kind: r.kind,
      state: { open: true, lastSentAt: r.lastSentAt, suppressed: r.suppressed, total: r.total },
    })),
  );
  for (const g of decided.groups) {
    if (g.state.open)
      await client.query(
        `INSERT INTO notify_groups (app, job, notifier, kind, last_sent_at, suppressed, total)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (app, job, notifier, kind) DO UPDATE SET last_sent_at = excluded.last_sent_at,
           suppressed = excluded.suppressed, total = excluded.total`,
        [app, job, g.notifier, g.kind, g.state.lastSentAt, g.state.suppressed, g.state.total],
      );
    else
      await client.query(
        `DELETE FROM notify_groups WHERE app = $1 AND job = $2 AND notifier = $3 AND kind = $4`,
        [app, job, g.notifier, g.kind],
      );
  }
  const out: NotificationRecord[] = [];
  for (const n of decided.notifications) {
    const r = await client.query<{ seq: number }>(
      `INSERT INTO notifications (id, event_key, event, app, job, run_id, notifier, notifier_type,
         count, text, body, status, attempts, last_status, last_error, created_at, next_attempt_at,
         ended_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
       ON CONFLICT (event_key) DO NOTHING RETURNING seq::float8 AS seq`,
      [
        n.id,
        n.eventKey,
        n.event,
        n.app,
        n.job,
        n.runId,
        n.notifier,
        n.notifierType,
        n.count,
        n.text,
        n.body,
        n.status,
        n.attempts,
        n.lastStatus,
        n.lastError,
        n.createdAt,
        n.nextAttemptAt,
        n.endedAt,
      ],
    );
    const seq = r.rows[0]?.seq;
    if (seq !== undefined) out.push({ ...n, seq });
  }
  return out;
}

export async function duePg(db: Db, now: number, limit: number): Promise<NotificationRecord[]> {
  const { rows } = await db.query<NotificationRecord>(
    `SELECT ${COLUMNS} FROM notifications WHERE status = 'pending' AND next_attempt_at <= $1
     ORDER BY next_attempt_at, seq LIMIT $2`,
    [now, limit],
  );
  return rows;
}

export async function nextPg(db: Db): Promise<number | null> {
  const { rows } = await db.query<{ at: number | null }>(
    `SELECT MIN(next_attempt_at)::float8 AS at FROM notifications WHERE status = 'pending'`,
  );
  return rows[0]?.at ?? null;
}

export async function updatePg(db: Db, id: string, p: NotificationPatch): Promise<boolean> {
  const r = await db.query(
    `UPDATE notifications SET status = $2, attempts = $3, last_status = $4, last_error = $5,
       next_attempt_at = $6, ended_at = $7
     WHERE id = $1 AND status = 'pending'`,
    [id, p.status, p.attempts, p.lastStatus, p.lastError, p.nextAttemptAt, p.endedAt],
  );
  return r.rowCount === 1;
}

/** Deletes the notifications whose delivery ended before `endedBefore`; returns the count. */
export async function prunePg(db: Db, endedBefore: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM notifications WHERE status <> 'pending' AND ended_at < $1`,
    [endedBefore],
  );
  return r.rowCount ?? 0;
}

export async function getPg(db: Db, id: string): Promise<NotificationRecord | null> {
  const { rows } = await db.query<NotificationRecord>(
    `SELECT ${COLUMNS} FROM notifications WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** The notifications of `ids` that exist, in one statement. */
export async function byIdsPg(db: Db, ids: readonly string[]): Promise<NotificationRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<NotificationRecord>(
    `SELECT ${COLUMNS} FROM notifications WHERE id = ANY($1::text[]) ORDER BY seq`,
    [ids],
  );
  return rows;
}

const FILTERS: readonly (readonly [keyof NotificationFilter, string])[] = [
  ['app', 'app ='],
  ['job', 'job ='],
  ['event', 'event ='],
  ['status', 'status ='],
  ['beforeSeq', 'seq <'],
];

export async function listPg(db: Db, filter: NotificationFilter): Promise<NotificationRecord[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  for (const [k, cond] of FILTERS) {
    if (filter[k] === undefined) continue;
    params.push(filter[k]);
    where.push(`${cond} $${params.length}`);
  }
  params.push(clampListLimit(filter.limit));
  const { rows } = await db.query<NotificationRecord>(
    `SELECT ${COLUMNS} FROM notifications ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY seq DESC LIMIT $${params.length}`,
    params,
  );
  return rows;
}
