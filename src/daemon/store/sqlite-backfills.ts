/**
 * Backfills on the SQLite store (SPEC §16, `backfill-types.ts`): their ops, applied inside the
 * store's write transaction, and their reads. A backfill's progress is counted from the runs its
 * plan items link to, in one query.
 */
import type Database from 'better-sqlite3';
import { clampListLimit } from './limits.js';
import type {
  BackfillCounts,
  BackfillFilter,
  BackfillItem,
  BackfillOp,
  BackfillRecord,
  BackfillState,
} from './backfill-types.js';
import type { LedgerResult } from './types.js';

type Stmt = Database.Statement<unknown[], unknown>;

/** The outcomes a backfill counts as failed (its safety gate); `crashed` runs are run again. */
export const BACKFILL_FAILED = `('app_rejected', 'retries_exhausted', 'internal_error')`;

const COUNTS = `
  (SELECT COUNT(*) FROM backfill_items i LEFT JOIN runs r ON r.id = i.run_id
   WHERE i.backfill_id = b.id AND (i.run_id IS NULL OR r.id IS NULL OR r.outcome = 'crashed')) AS pending,
  (SELECT COUNT(*) FROM backfill_items i JOIN runs r ON r.id = i.run_id
   WHERE i.backfill_id = b.id AND r.phase <> 'ended') AS active,
  (SELECT COUNT(*) FROM backfill_items i JOIN runs r ON r.id = i.run_id
   WHERE i.backfill_id = b.id AND r.outcome = 'success') AS succeeded,
  (SELECT COUNT(*) FROM backfill_items i JOIN runs r ON r.id = i.run_id
   WHERE i.backfill_id = b.id AND r.outcome IN ${BACKFILL_FAILED}) AS failed,
  (SELECT COUNT(*) FROM backfill_items i JOIN runs r ON r.id = i.run_id
   WHERE i.backfill_id = b.id AND r.phase = 'ended'
     AND r.outcome NOT IN ('success', 'crashed', 'app_rejected', 'retries_exhausted', 'internal_error')) AS other`;

const COLUMNS = `b.id, b.app, b.job, b.from_time AS "from", b.to_time AS "to",
  b.only_missing AS onlyMissing, b.parallel, b.stop_after_failures AS stopAfterFailures,
  b.state, b.total, b.created_by AS createdBy, b.created_at AS createdAt, b.ended_at AS endedAt,
  b.reason, ${COUNTS}`;

type Row = Omit<BackfillRecord, 'counts' | 'onlyMissing'> &
  BackfillCounts & { onlyMissing: number };

const fromRow = (r: Row): BackfillRecord => ({
  id: r.id,
  app: r.app,
  job: r.job,
  from: r.from,
  to: r.to,
  onlyMissing: r.onlyMissing === 1,
  parallel: r.parallel,
  stopAfterFailures: r.stopAfterFailures,
  state: r.state,
  total: r.total,
  createdBy: r.createdBy,
  createdAt: r.createdAt,
  endedAt: r.endedAt,
  reason: r.reason,
  counts: {
    pending: r.pending,
    active: r.active,
    succeeded: r.succeeded,
    failed: r.failed,
    other: r.other,
  },
});

const FILTERS: readonly (readonly [keyof BackfillFilter, string])[] = [
  ['app', 'b.app = @app'],
  ['job', 'b.job = @job'],
  ['state', 'b.state = @state'],
];

/** Backfills of one SQLite database (prepared once the schema exists). */
export class SqliteBackfills {
  private readonly s: Record<string, Stmt>;
  private readonly lists = new Map<string, Stmt>();

  constructor(private readonly db: Database.Database) {
    const p = (sql: string): Stmt => db.prepare(sql);
    this.s = {
      create: p(`INSERT INTO backfills (id, app, job, from_time, to_time, only_missing, parallel,
        stop_after_failures, state, total, created_by, created_at)
        VALUES (@id, @app, @job, @from, @to, @onlyMissing, @parallel, @stopAfterFailures,
        'running', @total, @createdBy, @createdAt)`),
      item: p(`INSERT INTO backfill_items (backfill_id, position, scheduled_time, schedule_index,
        run_key) VALUES (?, ?, ?, ?, ?)`),
      link: p(`UPDATE backfill_items SET run_id = ? WHERE backfill_id = ? AND position = ?
        AND EXISTS (SELECT 1 FROM backfills WHERE id = ? AND state = 'running')`),
      end: p(`UPDATE backfills SET state = ?, reason = ?, ended_at = ?
        WHERE id = ? AND state = 'running'`),
      get: p(`SELECT ${COLUMNS} FROM backfills b WHERE b.id = ?`),
      items: p(`SELECT i.position, i.scheduled_time AS scheduledTime,
        i.schedule_index AS scheduleIndex, i.run_key AS runKey, i.run_id AS runId,
        r.phase, r.outcome
        FROM backfill_items i LEFT JOIN runs r ON r.id = i.run_id
        WHERE i.backfill_id = ? ORDER BY i.position`),
      succeeded: p(`SELECT run_key FROM run_keys
        WHERE state = 'succeeded' AND run_key IN (SELECT value FROM json_each(?))`).pluck(),
      ran: p(`SELECT DISTINCT scheduled_time FROM runs
        WHERE app = ? AND job = ? AND scheduled_time >= ? AND scheduled_time < ?
        AND phase = 'ended' AND outcome IN ('success', 'crashed', 'app_rejected',
        'retries_exhausted', 'internal_error')`).pluck(),
    };
  }

  /** Applies one op inside the caller's transaction. */
  apply(op: BackfillOp): LedgerResult {
    switch (op.kind) {
      case 'backfill-create': {
        const b = op.backfill;
        this.s['create']!.run({
          ...b,
          onlyMissing: b.onlyMissing ? 1 : 0,
          total: op.items.length,
        });
        const item = this.s['item']!;
        for (const i of op.items)
          item.run(b.id, i.position, i.scheduledTime, i.scheduleIndex, i.runKey);
        return { kind: 'ok' };
      }
      case 'backfill-link':
        return this.s['link']!.run(op.runId, op.backfillId, op.position, op.backfillId).changes ===
          1
          ? { kind: 'ok' }
          : { kind: 'gone' };
      case 'backfill-end':
        return this.s['end']!.run(op.state, op.reason, op.endedAt, op.id).changes === 1
          ? { kind: 'ok' }
          : { kind: 'gone' };
    }
  }

  get(id: string): BackfillRecord | null {
    const row = this.s['get']!.get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  list(filter: BackfillFilter): BackfillRecord[] {
    const given = FILTERS.filter(([f]) => filter[f] !== undefined);
    const key = given.map(([f]) => f).join(',');
    let stmt = this.lists.get(key);
    if (!stmt) {
      const where = given.length ? `WHERE ${given.map(([, c]) => c).join(' AND ')}` : '';
      stmt = this.db.prepare(
        `SELECT ${COLUMNS} FROM backfills b ${where} ORDER BY b.created_at DESC, b.id DESC LIMIT @limit`,
      );
      this.lists.set(key, stmt);
    }
    const params: Record<string, unknown> = { limit: clampListLimit(filter.limit) };
    for (const [f] of given) params[f] = filter[f] as string | BackfillState;
    return (stmt.all(params) as Row[]).map(fromRow);
  }

  items(id: string): BackfillItem[] {
    return this.s['items']!.all(id) as BackfillItem[];
  }

  succeededKeys(keys: readonly string[]): Set<string> {
    if (keys.length === 0) return new Set();
    return new Set(this.s['succeeded']!.all(JSON.stringify(keys)) as string[]);
  }

  ranInstants(app: string, job: string, from: number, to: number): Set<number> {
    return new Set(this.s['ran']!.all(app, job, from, to) as number[]);
  }
}
