/**
 * The notification outbox of the SQLite store (SPEC §12; the seam is
 * {@link NotificationStore}). Each event's decision runs inside one
 * `BEGIN IMMEDIATE` transaction with its reads and writes, so it is atomic
 * against every other writer of the file.
 */
import type Database from 'better-sqlite3';
import { clampListLimit } from './limits.js';
import type {
  NewNotification,
  NotificationFilter,
  NotificationPatch,
  NotificationRecord,
  NotificationStore,
  NotifyGroupRow,
  NotifyPlan,
} from './types.js';

const COLUMNS = `seq, id, event_key AS eventKey, event, app, job, run_id AS runId, notifier,
  notifier_type AS notifierType, count, text, body, status, attempts, last_status AS lastStatus,
  last_error AS lastError, created_at AS createdAt, next_attempt_at AS nextAttemptAt,
  ended_at AS endedAt`;

const FILTERS: readonly (readonly [keyof NotificationFilter, string])[] = [
  ['app', 'app = @app'],
  ['job', 'job = @job'],
  ['event', 'event = @event'],
  ['status', 'status = @status'],
  ['beforeSeq', 'seq < @beforeSeq'],
];

/** The outbox on one SQLite connection (created once the schema is migrated). */
export class SqliteNotifications implements NotificationStore {
  readonly #db: Database.Database;
  readonly #groups: Database.Statement;
  readonly #upsertGroup: Database.Statement;
  readonly #deleteGroup: Database.Statement;
  readonly #insert: Database.Statement;
  readonly #due: Database.Statement;
  readonly #next: Database.Statement;
  readonly #update: Database.Statement;
  readonly #get: Database.Statement;
  readonly #prune: Database.Statement;
  readonly #byIds: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#groups = db.prepare(
      `SELECT notifier, kind, last_sent_at AS lastSentAt, suppressed, total
       FROM notify_groups WHERE app = ? AND job = ?`,
    );
    this.#upsertGroup = db.prepare(
      `INSERT INTO notify_groups (app, job, notifier, kind, last_sent_at, suppressed, total)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (app, job, notifier, kind) DO UPDATE SET last_sent_at = excluded.last_sent_at,
         suppressed = excluded.suppressed, total = excluded.total`,
    );
    this.#deleteGroup = db.prepare(
      `DELETE FROM notify_groups WHERE app = ? AND job = ? AND notifier = ? AND kind = ?`,
    );
    this.#insert = db.prepare(
      `INSERT INTO notifications (id, event_key, event, app, job, run_id, notifier, notifier_type,
         count, text, body, status, attempts, last_status, last_error, created_at, next_attempt_at,
         ended_at)
       VALUES (@id, @eventKey, @event, @app, @job, @runId, @notifier, @notifierType, @count, @text,
         @body, @status, @attempts, @lastStatus, @lastError, @createdAt, @nextAttemptAt, @endedAt)
       ON CONFLICT (event_key) DO NOTHING`,
    );
    this.#due = db.prepare(
      `SELECT ${COLUMNS} FROM notifications WHERE status = 'pending' AND next_attempt_at <= ?
       ORDER BY next_attempt_at, seq LIMIT ?`,
    );
    this.#next = db
      .prepare(`SELECT MIN(next_attempt_at) FROM notifications WHERE status = 'pending'`)
      .pluck();
    this.#update = db.prepare(
      `UPDATE notifications SET status = @status, attempts = @attempts, last_status = @lastStatus,
         last_error = @lastError, next_attempt_at = @nextAttemptAt, ended_at = @endedAt
       WHERE id = @id AND status = 'pending'`,
    );
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM notifications WHERE id = ?`);
    this.#byIds = db.prepare(
      `SELECT ${COLUMNS} FROM notifications WHERE id IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    );
    this.#prune = db.prepare(
      `DELETE FROM notifications WHERE status <> 'pending' AND ended_at < ?`,
    );
  }

  async recordNotifications(
    app: string,
    job: string,
    plan: (groups: NotifyGroupRow[]) => NotifyPlan,
  ): Promise<NotificationRecord[]> {
    return this.#db
      .transaction(() => {
        const rows = this.#groups.all(app, job) as {
          notifier: string;
          kind: 'failed' | 'missed';
          lastSentAt: number | null;
          suppressed: number;
          total: number;
        }[];
        const decided = plan(
          rows.map((r) => ({
            notifier: r.notifier,
            kind: r.kind,
            state: {
              open: true,
              lastSentAt: r.lastSentAt,
              suppressed: r.suppressed,
              total: r.total,
            },
          })),
        );
        for (const g of decided.groups) {
          if (g.state.open)
            this.#upsertGroup.run(
              app,
              job,
              g.notifier,
              g.kind,
              g.state.lastSentAt,
              g.state.suppressed,
              g.state.total,
            );
          else this.#deleteGroup.run(app, job, g.notifier, g.kind);
        }
        const out: NotificationRecord[] = [];
        for (const n of decided.notifications) {
          const r = this.#insert.run(n);
          if (r.changes === 1) out.push({ ...n, seq: Number(r.lastInsertRowid) });
        }
        return out;
      })
      .immediate();
  }

  async dueNotifications(now: number, limit: number): Promise<NotificationRecord[]> {
    return this.#due.all(now, limit) as NotificationRecord[];
  }

  async nextNotificationAt(): Promise<number | null> {
    return (this.#next.get() as number | null | undefined) ?? null;
  }

  async updateNotification(id: string, patch: NotificationPatch): Promise<boolean> {
    return this.#update.run({ ...patch, id }).changes === 1;
  }

  async getNotification(id: string): Promise<NotificationRecord | null> {
    return (this.#get.get(id) as NotificationRecord | undefined) ?? null;
  }

  async notificationsByIds(ids: readonly string[]): Promise<NotificationRecord[]> {
    if (ids.length === 0) return [];
    return this.#byIds.all(JSON.stringify(ids)) as NotificationRecord[];
  }

  async pruneNotifications(endedBefore: number): Promise<number> {
    return this.#prune.run(endedBefore).changes;
  }

  async listNotifications(filter: NotificationFilter): Promise<NotificationRecord[]> {
    const conditions = FILTERS.filter(([k]) => filter[k] !== undefined).map(([, c]) => c);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const params: Record<string, unknown> = { limit: clampListLimit(filter.limit) };
    for (const [k] of FILTERS) if (filter[k] !== undefined) params[k] = filter[k];
    return this.#db
      .prepare(`SELECT ${COLUMNS} FROM notifications ${where} ORDER BY seq DESC LIMIT @limit`)
      .all(params) as NotificationRecord[];
  }
}

/** A new notification's row values (for callers building one). */
export type { NewNotification };
