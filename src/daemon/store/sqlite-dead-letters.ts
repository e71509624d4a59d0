/**
 * Dead letters on the SQLite store (SPEC §16, `dead-letter-types.ts`): one query each, read
 * through the `(run_key, seq)` index for "a newer run of this key".
 */
import type Database from 'better-sqlite3';
import { clampListLimit } from './limits.js';
import { fromRow, RUN_COLUMNS, type Row } from './sqlite-sql.js';
import type { DeadLetterCount, DeadLetterFilter } from './dead-letter-types.js';
import type { RunRecord } from './types.js';

type Stmt = Database.Statement<unknown[], unknown>;

const FAILED = `('app_rejected', 'retries_exhausted', 'crashed', 'internal_error')`;

/** A dead letter: `r` ended failed, its key free, no newer active or failed run, not dismissed. */
export const DEAD = `r.phase = 'ended' AND r.outcome IN ${FAILED}
  AND NOT EXISTS (SELECT 1 FROM run_keys k WHERE k.run_key = r.run_key)
  AND NOT EXISTS (SELECT 1 FROM runs n WHERE n.run_key = r.run_key AND n.seq > r.seq
                  AND (n.phase <> 'ended' OR n.outcome IN ${FAILED}))
  AND NOT EXISTS (SELECT 1 FROM dismissals d WHERE d.run_id = r.id)`;

const FILTERS: readonly (readonly [keyof DeadLetterFilter, string])[] = [
  ['app', 'r.app = @app'],
  ['job', 'r.job = @job'],
  ['outcomes', 'r.outcome IN (SELECT value FROM json_each(@outcomes))'],
  ['from', 'r.scheduled_time >= @from'],
  ['to', 'r.scheduled_time < @to'],
  ['beforeSeq', 'r.seq < @beforeSeq'],
];

const COLUMNS = RUN_COLUMNS.split(',')
  .map((c) => `r.${c.trim()}`)
  .join(', ');

/** Dead letters of one SQLite database (prepared once the schema exists). */
export class SqliteDeadLetters {
  private readonly lists = new Map<string, Stmt>();
  private readonly counts: Stmt;
  private readonly isDead: Stmt;
  private readonly dismiss: Stmt;

  constructor(private readonly db: Database.Database) {
    this.counts = db.prepare(
      `SELECT r.app, r.job, COUNT(*) AS count FROM runs r WHERE ${DEAD} GROUP BY r.app, r.job ORDER BY r.app, r.job`,
    );
    this.isDead = db.prepare(`SELECT 1 FROM runs r WHERE r.id = ? AND ${DEAD}`).pluck();
    this.dismiss = db.prepare(
      `INSERT INTO dismissals (run_id, note, dismissed_by, dismissed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
  }

  list(filter: DeadLetterFilter): RunRecord[] {
    const given = FILTERS.filter(([f]) => filter[f] !== undefined);
    const key = given.map(([f]) => f).join(',');
    let stmt = this.lists.get(key);
    if (!stmt) {
      const extra = given.map(([, c]) => ` AND ${c}`).join('');
      stmt = this.db.prepare(
        `SELECT ${COLUMNS} FROM runs r WHERE ${DEAD}${extra} ORDER BY r.seq DESC LIMIT @limit`,
      );
      this.lists.set(key, stmt);
    }
    const params: Record<string, unknown> = { limit: clampListLimit(filter.limit) };
    for (const [f] of given)
      params[f] = f === 'outcomes' ? JSON.stringify(filter.outcomes) : filter[f];
    return (stmt.all(params) as Row[]).map(fromRow);
  }

  countAll(): DeadLetterCount[] {
    return this.counts.all() as DeadLetterCount[];
  }

  /** In one transaction: the ids that are dead letters now are dismissed. */
  dismissAll(ids: readonly string[], note: string, by: string, at: number): string[] {
    return this.db
      .transaction(() => {
        const done: string[] = [];
        for (const id of new Set(ids))
          if (this.isDead.get(id) !== undefined && this.dismiss.run(id, note, by, at).changes === 1)
            done.push(id);
        return done;
      })
      .immediate();
  }
}
