/**
 * The command hand-off and the change feed on PostgreSQL (SPEC §10): API verbs
 * a standby writes to `commands` for the leader, and NOTIFY on the schema's
 * channel to wake whoever waits. A command is `pending` until the leader takes
 * it or its sender withdraws it — both a compare-and-set from `pending`, so
 * exactly one of them happens — and `done` once the leader stored its result.
 *
 * Wire format of the channel (kept from earlier versions): `released`,
 * `command:<id>`, `done:<id>`, `live:<json>`.
 */
import type pg from 'pg';
import type { CommandStatus, Fence, FeedMessage, PendingCommand } from '../coordination.js';
import { MS } from './lease.js';

/** The NOTIFY channel of a schema (one database may hold several deployments). */
export const channelOf = (schema: string): string => `cronix_${schema}`;

/** A feed message as a NOTIFY payload. */
export function payloadOf(m: FeedMessage): string {
  switch (m.kind) {
    case 'released':
      return 'released';
    case 'command':
      return `command:${m.id}`;
    case 'done':
      return `done:${m.id}`;
    case 'live':
      return `live:${JSON.stringify(m.change)}`;
  }
}

/** A NOTIFY payload as a feed message; null for one this version does not know. */
export function messageOf(payload: string): FeedMessage | null {
  if (payload === 'released') return { kind: 'released' };
  const colon = payload.indexOf(':');
  const head = payload.slice(0, colon);
  const rest = payload.slice(colon + 1);
  if (head === 'command' || head === 'done') {
    const id = Number(rest);
    return Number.isSafeInteger(id) ? { kind: head, id } : null;
  }
  if (head === 'live') {
    try {
      return { kind: 'live', change: JSON.parse(rest) as never };
    } catch {
      return null;
    }
  }
  return null;
}

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

/** Pending commands, oldest first. */
export async function pendingCommands(db: pg.Pool, limit: number): Promise<PendingCommand[]> {
  const { rows } = await db.query<PendingCommand>(
    `SELECT id, kind, payload, ${MS('now() - created_at')} AS "ageMs" FROM commands
     WHERE state = 'pending' AND done_at IS NULL ORDER BY id LIMIT $1`,
    [limit],
  );
  return rows;
}

/** `pending → taken`, only while `fence` holds the live lease. */
export async function takeCommand(db: pg.Pool, id: number, fence: Fence): Promise<boolean> {
  const r = await db.query(
    `UPDATE commands SET state = 'taken', taken_epoch = $2, taken_at = now()
     WHERE id = $1 AND state = 'pending' AND done_at IS NULL
     AND EXISTS (SELECT 1 FROM lease WHERE name = 'leader' AND holder = $3 AND epoch = $2
                 AND expires_at > now())`,
    [id, fence.epoch, fence.holder],
  );
  return r.rowCount === 1;
}

/** `taken → done` with the result, and wakes the sender. */
export async function completeCommand(
  db: pg.Pool,
  channel: string,
  id: number,
  result: unknown,
): Promise<boolean> {
  const r = await db.query(
    `WITH done AS (UPDATE commands SET state = 'done', done_at = now(), result = $2
                   WHERE id = $1 AND state = 'taken' RETURNING id)
     SELECT pg_notify($3, 'done:' || id) FROM done`,
    [id, JSON.stringify(result), channel],
  );
  return r.rowCount === 1;
}

/** `pending → abandoned`: true when withdrawn. */
export async function withdrawCommand(db: pg.Pool, id: number): Promise<boolean> {
  const r = await db.query(
    `UPDATE commands SET state = 'abandoned', done_at = now()
     WHERE id = $1 AND state = 'pending' AND done_at IS NULL`,
    [id],
  );
  return r.rowCount === 1;
}

/** Where a command is (a command completed by an older cronix, without `state`, is done). */
export async function commandStatus(db: pg.Pool, id: number): Promise<CommandStatus | null> {
  const { rows } = await db.query<CommandStatus>(
    `SELECT CASE WHEN state = 'pending' AND done_at IS NOT NULL THEN 'done' ELSE state END AS state,
       result, taken_epoch AS "takenEpoch" FROM commands WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  return { ...row, result: row.state === 'done' ? row.result : undefined };
}

/** Deletes old finished commands, old pending ones, and old taken ones of a term that is over. */
export async function pruneCommands(db: pg.Pool, olderThanMs: number): Promise<number> {
  const r = await db.query(
    `WITH cutoff AS (SELECT now() - make_interval(secs => $1::double precision / 1000) AS at)
     DELETE FROM commands c USING cutoff
     WHERE (c.done_at IS NOT NULL AND c.done_at < cutoff.at)
        OR (c.state = 'pending' AND c.created_at < cutoff.at)
        OR (c.state = 'taken' AND c.taken_at < cutoff.at AND NOT EXISTS (
              SELECT 1 FROM lease WHERE name = 'leader' AND epoch = c.taken_epoch
              AND expires_at > now()))`,
    [olderThanMs],
  );
  return r.rowCount ?? 0;
}

/** Sends one message on the channel. */
export async function notify(db: pg.Pool, channel: string, message: FeedMessage): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, payloadOf(message)]);
}
