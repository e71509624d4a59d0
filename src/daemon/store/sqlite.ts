/**
 * The default {@link Store}: one SQLite file through better-sqlite3 (see
 * docs/store.md). WAL journal with `synchronous = FULL`, so every resolved
 * write has been fsynced to the WAL and survives SIGKILL and power loss; every
 * multi-row write is one transaction, so a crash keeps a whole tick or none of
 * it. Calls are synchronous underneath and wrapped in promises to fit the seam.
 */
import Database from 'better-sqlite3';
import { type AppliedMigration, appliedMigrations, migrateSqlite } from './migrations.js';
import type {
  NewRun,
  RunFilter,
  RunOutcome,
  RunPatch,
  RunRecord,
  ScheduleRef,
  Store,
} from './types.js';

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /** How long a write waits for another connection's lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** Clock for `schema_migrations.applied_at`. Default `Date.now`. */
  now?: () => number;
}

/** The connection settings in effect, as SQLite reports them. */
export interface SqliteSettings {
  /** `wal` for a file database. */
  journalMode: string;
  /** 2 = FULL. */
  synchronous: number;
  busyTimeoutMs: number;
  foreignKeys: boolean;
}

/** Default and maximum page size of {@link Store.listRuns}. */
export const LIST_LIMIT = { default: 100, max: 1000 } as const;

const RUN_COLUMNS = `seq, id, run_key AS runKey, app, job, schedule_index AS scheduleIndex,
  scheduled_time AS scheduledTime, "trigger", phase, outcome, attempts,
  last_status AS lastStatus, created_at AS createdAt, started_at AS startedAt,
  ended_at AS endedAt, due_at AS dueAt`;

const INSERT_RUN = `INSERT INTO runs (id, run_key, app, job, schedule_index, scheduled_time,
  "trigger", phase, outcome, attempts, last_status, created_at, started_at, ended_at, due_at)
  VALUES (@id, @runKey, @app, @job, @scheduleIndex, @scheduledTime, @trigger, @phase, @outcome,
  @attempts, @lastStatus, @createdAt, @startedAt, @endedAt, @dueAt)`;

/** Patchable fields and their columns, in a fixed order (keys of a statement cache). */
const PATCH_COLUMNS: readonly (readonly [keyof RunPatch, string])[] = [
  ['phase', 'phase'],
  ['outcome', 'outcome'],
  ['attempts', 'attempts'],
  ['lastStatus', 'last_status'],
  ['startedAt', 'started_at'],
  ['endedAt', 'ended_at'],
  ['dueAt', 'due_at'],
];

/** List filters and their conditions, in a fixed order (keys of a statement cache). */
const FILTER_CONDITIONS: readonly (readonly [keyof RunFilter, string])[] = [
  ['app', 'app = @app'],
  ['job', 'job = @job'],
  ['outcome', 'outcome = @outcome'],
  ['phase', 'phase = @phase'],
  ['beforeSeq', 'seq < @beforeSeq'],
];

type Stmt = Database.Statement<unknown[], unknown>;

/** Statements prepared once the schema exists. */
interface Prepared {
  insertRun: Stmt;
  getRun: Stmt;
  queuedAll: Stmt;
  queuedOfApp: Stmt;
  queuedOfJob: Stmt;
  running: Stmt;
  hasSucceeded: Stmt;
  lastSuccess: Stmt;
  endCrashed: Stmt;
  pruneRuns: Stmt;
  getCheckpoint: Stmt;
  setCheckpoint: Stmt;
  pausedJobs: Stmt;
  pause: Stmt;
  resume: Stmt;
  outcomeCounts: Stmt;
}

/** A {@link Store} on one SQLite file. Call {@link SqliteStore.migrate} before anything else. */
export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #now: () => number;
  #stmts: Prepared | null = null;
  readonly #patchStmts = new Map<string, Stmt>();
  readonly #listStmts = new Map<string, Stmt>();

  /**
   * Opens (creating if absent) the database at `path` and applies the
   * durability settings. The parent directory must exist.
   */
  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    this.#now = options.now ?? Date.now;
    this.#db = new Database(path);
    try {
      this.#db.pragma('journal_mode = WAL');
      this.#db.pragma('synchronous = FULL');
      this.#db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
      this.#db.pragma('foreign_keys = ON');
      // keep the WAL file from staying huge after a large tick
      this.#db.pragma('journal_size_limit = 67108864');
    } catch (err) {
      this.#db.close();
      throw err;
    }
  }

  /** Runs pending migrations (each in one `BEGIN IMMEDIATE` transaction) and prepares statements. */
  async migrate(): Promise<void> {
    migrateSqlite(this.#db, undefined, this.#now);
    this.#stmts ??= this.#prepare();
  }

  /** Inserts the runs in one transaction; the returned rows carry their `seq`. */
  async insertRuns(runs: NewRun[]): Promise<RunRecord[]> {
    if (runs.length === 0) return [];
    const { insertRun } = this.#s();
    return this.#db.transaction((batch: NewRun[]) =>
      batch.map((run): RunRecord => {
        const row: RunRecord = {
          id: run.id,
          runKey: run.runKey,
          app: run.app,
          job: run.job,
          scheduleIndex: run.scheduleIndex ?? null,
          scheduledTime: run.scheduledTime,
          trigger: run.trigger,
          phase: run.phase,
          outcome: run.outcome ?? null,
          attempts: run.attempts,
          lastStatus: run.lastStatus ?? null,
          createdAt: run.createdAt,
          startedAt: run.startedAt ?? null,
          endedAt: run.endedAt ?? null,
          dueAt: run.dueAt ?? null,
          seq: 0,
        };
        row.seq = Number(insertRun.run(row).lastInsertRowid);
        return row;
      }),
    )(runs);
  }

  /** Applies every patch in one transaction; only the fields present (not `undefined`) change. */
  async updateRuns(patches: { id: string; patch: RunPatch }[]): Promise<void> {
    const work: { stmt: Stmt; params: Record<string, unknown> }[] = [];
    for (const { id, patch } of patches) {
      const given = PATCH_COLUMNS.filter(([field]) => patch[field] !== undefined);
      if (given.length === 0) continue;
      const params: Record<string, unknown> = { id };
      for (const [field] of given) params[field] = patch[field];
      work.push({ stmt: this.#patchStmt(given), params });
    }
    if (work.length === 0) return;
    this.#db.transaction(() => {
      for (const { stmt, params } of work) stmt.run(params);
    })();
  }

  async getRun(id: string): Promise<RunRecord | null> {
    return (this.#s().getRun.get(id) as RunRecord | undefined) ?? null;
  }

  /** Newest first (by `seq`); `limit` defaults to 100 and is capped at 1000. */
  async listRuns(filter: RunFilter): Promise<RunRecord[]> {
    const given = FILTER_CONDITIONS.filter(([field]) => filter[field] !== undefined);
    const key = given.map(([field]) => field).join(',');
    let stmt = this.#listStmts.get(key);
    if (!stmt) {
      this.#s();
      const where = given.length ? `WHERE ${given.map(([, cond]) => cond).join(' AND ')}` : '';
      stmt = this.#db.prepare(
        `SELECT ${RUN_COLUMNS} FROM runs ${where} ORDER BY seq DESC LIMIT @limit`,
      );
      this.#listStmts.set(key, stmt);
    }
    const params: Record<string, unknown> = { limit: clampLimit(filter.limit) };
    for (const [field] of given) params[field] = filter[field];
    return stmt.all(params) as RunRecord[];
  }

  async queuedRuns(app?: string, job?: string): Promise<RunRecord[]> {
    const s = this.#s();
    if (app !== undefined && job !== undefined) return s.queuedOfJob.all(app, job) as RunRecord[];
    if (app !== undefined) return s.queuedOfApp.all(app) as RunRecord[];
    const all = s.queuedAll.all() as RunRecord[];
    return job === undefined ? all : all.filter((r) => r.job === job);
  }

  async runningRuns(): Promise<RunRecord[]> {
    return this.#s().running.all() as RunRecord[];
  }

  async hasSucceeded(runKey: string): Promise<boolean> {
    return this.#s().hasSucceeded.get(runKey) !== undefined;
  }

  async succeededAmong(runKeys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < runKeys.length; i += 500) {
      const chunk = runKeys.slice(i, i + 500);
      const rows = this.#db
        .prepare(
          `SELECT run_key FROM runs WHERE outcome = 'success' AND run_key IN (${chunk.map(() => '?').join(',')})`,
        )
        .pluck()
        .all(...chunk) as string[];
      for (const key of rows) found.add(key);
    }
    return found;
  }

  async lastSuccess(app: string, job: string): Promise<number | null> {
    return (this.#s().lastSuccess.get(app, job) as number | null | undefined) ?? null;
  }

  /** One `UPDATE`: every `running` run becomes `ended`/`crashed` with `endedAt = now`. */
  async endCrashed(now: number): Promise<number> {
    return this.#s().endCrashed.run(now).changes;
  }

  async pruneRuns(endedBefore: number): Promise<number> {
    return this.#s().pruneRuns.run(endedBefore).changes;
  }

  async getCheckpoint(ref: ScheduleRef): Promise<number | null> {
    const at = this.#s().getCheckpoint.get(ref.app, ref.job, ref.scheduleIndex);
    return (at as number | undefined) ?? null;
  }

  /** Upserts every checkpoint in one transaction (a later value for the same schedule wins). */
  async setCheckpoints(items: (ScheduleRef & { at: number })[]): Promise<void> {
    if (items.length === 0) return;
    const { setCheckpoint } = this.#s();
    this.#db.transaction(() => {
      for (const i of items) setCheckpoint.run(i.app, i.job, i.scheduleIndex, i.at);
    })();
  }

  async pausedJobs(): Promise<Set<string>> {
    const rows = this.#s().pausedJobs.all() as { app: string; job: string }[];
    return new Set(rows.map((r) => `${r.app}/${r.job}`));
  }

  async setPaused(app: string, job: string, paused: boolean): Promise<void> {
    const s = this.#s();
    (paused ? s.pause : s.resume).run(app, job);
  }

  /** Counts by outcome of the job's ended runs whose `scheduledTime >= since`. */
  async outcomeCounts(
    app: string,
    job: string,
    since: number,
  ): Promise<Partial<Record<RunOutcome, number>>> {
    const rows = this.#s().outcomeCounts.all(app, job, since) as {
      outcome: RunOutcome;
      n: number;
    }[];
    const counts: Partial<Record<RunOutcome, number>> = {};
    for (const r of rows) counts[r.outcome] = r.n;
    return counts;
  }

  /** Closes the connection (SQLite checkpoints the WAL into the main file). Idempotent. */
  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  /** The connection's durability settings as SQLite reports them (diagnostics, tests). */
  settings(): SqliteSettings {
    return {
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      synchronous: Number(this.#db.pragma('synchronous', { simple: true })),
      busyTimeoutMs: Number(this.#db.pragma('busy_timeout', { simple: true })),
      foreignKeys: Number(this.#db.pragma('foreign_keys', { simple: true })) === 1,
    };
  }

  /** The rows of `schema_migrations`, ascending by version. */
  appliedMigrations(): AppliedMigration[] {
    return appliedMigrations(this.#db);
  }

  /** `PRAGMA integrity_check`: `['ok']` for a sound file, else SQLite's complaints. */
  integrityCheck(): string[] {
    const rows = this.#db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check);
  }

  #s(): Prepared {
    if (!this.#stmts) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#stmts;
  }

  #patchStmt(given: readonly (readonly [keyof RunPatch, string])[]): Stmt {
    const key = given.map(([field]) => field).join(',');
    let stmt = this.#patchStmts.get(key);
    if (!stmt) {
      const sets = given.map(([field, column]) => `${column} = @${field}`).join(', ');
      stmt = this.#db.prepare(`UPDATE runs SET ${sets} WHERE id = @id`);
      this.#patchStmts.set(key, stmt);
    }
    return stmt;
  }

  #prepare(): Prepared {
    const db = this.#db;
    const p = (sql: string): Stmt => db.prepare(sql);
    return {
      insertRun: p(INSERT_RUN),
      getRun: p(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`),
      queuedAll: p(`SELECT ${RUN_COLUMNS} FROM runs WHERE phase = 'queued' ORDER BY seq`),
      queuedOfApp: p(
        `SELECT ${RUN_COLUMNS} FROM runs WHERE phase = 'queued' AND app = ? ORDER BY seq`,
      ),
      queuedOfJob: p(
        `SELECT ${RUN_COLUMNS} FROM runs
         WHERE phase = 'queued' AND app = ? AND job = ? ORDER BY seq`,
      ),
      running: p(`SELECT ${RUN_COLUMNS} FROM runs WHERE phase = 'running' ORDER BY seq`),
      hasSucceeded: p(`SELECT 1 FROM runs WHERE run_key = ? AND outcome = 'success' LIMIT 1`),
      lastSuccess: p(
        `SELECT MAX(ended_at) FROM runs WHERE app = ? AND job = ? AND outcome = 'success'`,
      ).pluck(),
      endCrashed: p(
        `UPDATE runs SET phase = 'ended', outcome = 'crashed', ended_at = ?
         WHERE phase = 'running'`,
      ),
      pruneRuns: p(`DELETE FROM runs WHERE phase = 'ended' AND ended_at < ?`),
      getCheckpoint: p(
        'SELECT at FROM checkpoints WHERE app = ? AND job = ? AND schedule_index = ?',
      ).pluck(),
      setCheckpoint: p(
        `INSERT INTO checkpoints (app, job, schedule_index, at) VALUES (?, ?, ?, ?)
         ON CONFLICT (app, job, schedule_index) DO UPDATE SET at = excluded.at`,
      ),
      pausedJobs: p('SELECT app, job FROM paused_jobs ORDER BY app, job'),
      pause: p('INSERT INTO paused_jobs (app, job) VALUES (?, ?) ON CONFLICT DO NOTHING'),
      resume: p('DELETE FROM paused_jobs WHERE app = ? AND job = ?'),
      outcomeCounts: p(
        `SELECT outcome, COUNT(*) AS n FROM runs
         WHERE app = ? AND job = ? AND scheduled_time >= ? AND outcome IS NOT NULL
         GROUP BY outcome`,
      ),
    };
  }
}

/** Opens the store at `path` and migrates it. */
export async function openSqliteStore(
  path: string,
  options: SqliteStoreOptions = {},
): Promise<SqliteStore> {
  const store = new SqliteStore(path, options);
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return LIST_LIMIT.default;
  return Math.min(LIST_LIMIT.max, Math.max(0, Math.trunc(limit)));
}
