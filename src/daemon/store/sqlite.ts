/**
 * The default {@link Store}: one SQLite file through better-sqlite3 (see
 * docs/store.md). WAL journal with `synchronous = FULL`, so every resolved
 * write has been fsynced to the WAL and survives SIGKILL and power loss; every
 * {@link Store.write} is one transaction, so a crash keeps a whole batch or
 * none of it. SQLite has one writer at a time, so a claim's check and take in
 * one transaction are atomic. Calls are synchronous underneath and wrapped in
 * promises to fit the seam.
 */
import Database from 'better-sqlite3';
import { type AppliedMigration, appliedMigrations, migrateSqlite } from './migrations.js';
import { SqliteNotifications } from './sqlite-notifications.js';
import { withSeq } from './record.js';
import type {
  AttemptLogEntry,
  Checkpoint,
  EndPatch,
  JobOutcomes,
  JobRef,
  OutcomeGroup,
  LedgerOp,
  LedgerResult,
  NewRun,
  NotificationFilter,
  NotificationPatch,
  NotificationRecord,
  NotifyGroupRow,
  NotifyPlan,
  RunFilter,
  RunOutcome,
  RunProcess,
  RunRecord,
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
  ended_at AS endedAt, due_at AS dueAt, error, attempt_log AS attemptLog,
  output_truncated AS outputTruncated`;

const INSERT_RUN = `INSERT INTO runs (id, run_key, app, job, schedule_index, scheduled_time,
  "trigger", phase, outcome, attempts, last_status, created_at, started_at, ended_at, due_at,
  error, attempt_log, output_truncated)
  VALUES (@id, @runKey, @app, @job, @scheduleIndex, @scheduledTime, @trigger, @phase, @outcome,
  @attempts, @lastStatus, @createdAt, @startedAt, @endedAt, @dueAt, @error, @attemptLog,
  @outputTruncated)`;

/** List filters and their conditions, in a fixed order (keys of a statement cache). */
const FILTER_CONDITIONS: readonly (readonly [keyof RunFilter, string])[] = [
  ['app', 'app = @app'],
  ['job', 'job = @job'],
  ['outcome', 'outcome = @outcome'],
  ['phase', 'phase = @phase'],
  ['beforeSeq', 'seq < @beforeSeq'],
];

type Stmt = Database.Statement<unknown[], unknown>;

/** A row as SQLite returns it: the attempt log is JSON text, booleans are 0/1. */
type Row = Omit<RunRecord, 'attemptLog' | 'outputTruncated'> & {
  attemptLog: string | null;
  outputTruncated: number;
};

/** Statements prepared once the schema exists. */
interface Prepared {
  insertRun: Stmt;
  getRun: Stmt;
  queuedAll: Stmt;
  queuedOfApp: Stmt;
  queuedOfJob: Stmt;
  running: Stmt;
  runningProcesses: Stmt;
  setProcess: Stmt;
  lastSuccess: Stmt;
  lastSuccesses: Stmt;
  endCrashed: Stmt;
  releaseRunningKeys: Stmt;
  pruneRuns: Stmt;
  pruneKeys: Stmt;
  pruneFires: Stmt;
  checkpoints: Stmt;
  setCheckpoint: Stmt;
  pausedJobs: Stmt;
  pause: Stmt;
  resume: Stmt;
  outcomeCounts: Stmt;
  recentOutcomes: Stmt;
  outcomeSummary: Stmt;
  claimFire: Stmt;
  claimKey: Stmt;
  keyHolder: Stmt;
  succeedKey: Stmt;
  releaseKey: Stmt;
  startRun: Stmt;
  endRun: Stmt;
  dueRun: Stmt;
  withdrawRun: Stmt;
  unclaimFire: Stmt;
}

const parseLog = (text: string | null): AttemptLogEntry[] =>
  text === null ? [] : (JSON.parse(text) as AttemptLogEntry[]);
const logText = (log: readonly AttemptLogEntry[]): string | null =>
  log.length === 0 ? null : JSON.stringify(log);
const fromRow = (row: Row): RunRecord => ({
  ...row,
  attemptLog: parseLog(row.attemptLog),
  outputTruncated: row.outputTruncated === 1,
});

/** A {@link Store} on one SQLite file. Call {@link SqliteStore.migrate} before anything else. */
export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #now: () => number;
  #stmts: Prepared | null = null;
  #notifications: SqliteNotifications | null = null;
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
    this.#notifications ??= new SqliteNotifications(this.#db);
  }

  // ---- notifications (SPEC §12), see sqlite-notifications.ts ----

  #n(): SqliteNotifications {
    if (!this.#notifications) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#notifications;
  }

  recordNotifications(
    app: string,
    job: string,
    plan: (groups: NotifyGroupRow[]) => NotifyPlan,
  ): Promise<NotificationRecord[]> {
    return this.#n().recordNotifications(app, job, plan);
  }

  dueNotifications(now: number, limit: number): Promise<NotificationRecord[]> {
    return this.#n().dueNotifications(now, limit);
  }

  nextNotificationAt(): Promise<number | null> {
    return this.#n().nextNotificationAt();
  }

  updateNotification(id: string, patch: NotificationPatch): Promise<boolean> {
    return this.#n().updateNotification(id, patch);
  }

  getNotification(id: string): Promise<NotificationRecord | null> {
    return this.#n().getNotification(id);
  }

  pruneNotifications(endedBefore: number): Promise<number> {
    return this.#n().pruneNotifications(endedBefore);
  }

  listNotifications(filter: NotificationFilter): Promise<NotificationRecord[]> {
    return this.#n().listNotifications(filter);
  }

  /** Applies the ops in order in one `BEGIN IMMEDIATE` transaction. */
  async write(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
    if (ops.length === 0) return [];
    this.#s();
    return this.#db.transaction(() => ops.map((op) => this.#apply(op))).immediate();
  }

  async getRun(id: string): Promise<RunRecord | null> {
    return this.#get(id);
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
    return (stmt.all(params) as Row[]).map(fromRow);
  }

  async queuedRuns(app?: string, job?: string): Promise<RunRecord[]> {
    const s = this.#s();
    let rows: Row[];
    if (app !== undefined && job !== undefined) rows = s.queuedOfJob.all(app, job) as Row[];
    else if (app !== undefined) rows = s.queuedOfApp.all(app) as Row[];
    else rows = (s.queuedAll.all() as Row[]).filter((r) => job === undefined || r.job === job);
    return rows.map(fromRow);
  }

  async runningRuns(): Promise<RunRecord[]> {
    return (this.#s().running.all() as Row[]).map(fromRow);
  }

  async runningProcesses(): Promise<RunProcess[]> {
    return this.#s().runningProcesses.all() as RunProcess[];
  }

  async keyHolder(
    runKey: string,
  ): Promise<{ runId: string; state: 'running' | 'succeeded' } | null> {
    const row = this.#s().keyHolder.get(runKey) as
      { run_id: string; state: 'running' | 'succeeded' } | undefined;
    return row ? { runId: row.run_id, state: row.state } : null;
  }

  async lastSuccess(app: string, job: string): Promise<number | null> {
    return (this.#s().lastSuccess.get(app, job) as number | null | undefined) ?? null;
  }

  async lastSuccesses(): Promise<Map<string, number>> {
    const rows = this.#s().lastSuccesses.all() as { app: string; job: string; at: number }[];
    return new Map(rows.map((r) => [`${r.app}/${r.job}`, r.at]));
  }

  /** Every `running` run becomes `ended`/`crashed`, and their keys are released, in one transaction. */
  async endCrashed(now: number, error: string): Promise<number> {
    const s = this.#s();
    return this.#db
      .transaction(() => {
        const n = s.endCrashed.run(now, error).changes;
        s.releaseRunningKeys.run();
        return n;
      })
      .immediate();
  }

  async pruneRuns(endedBefore: number): Promise<number> {
    const s = this.#s();
    return this.#db
      .transaction(() => {
        const n = s.pruneRuns.run(endedBefore).changes;
        s.pruneKeys.run(endedBefore);
        s.pruneFires.run(endedBefore);
        return n;
      })
      .immediate();
  }

  async checkpoints(): Promise<Checkpoint[]> {
    return this.#s().checkpoints.all() as Checkpoint[];
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

  /** One statement: each job's newest ended runs through its `(app, job, seq)` index range. */
  async recentOutcomes(jobs: readonly JobRef[], perJob: number): Promise<JobOutcomes[]> {
    if (jobs.length === 0 || perJob < 1) return [];
    const rows = this.#s().recentOutcomes.all({
      jobs: jobsJson(jobs),
      n: Math.trunc(perJob),
    }) as { app: string; job: string; outcomes: string }[];
    const out: JobOutcomes[] = [];
    for (const r of rows) {
      const outcomes = JSON.parse(r.outcomes) as RunOutcome[];
      if (outcomes.length > 0) out.push({ app: r.app, job: r.job, outcomes });
    }
    return out;
  }

  /** One statement: each job's `(app, job, scheduled_time)` index range from `since`. */
  async outcomeSummary(jobs: readonly JobRef[], since: number): Promise<OutcomeGroup[]> {
    if (jobs.length === 0) return [];
    const rows = this.#s().outcomeSummary.all({ jobs: jobsJson(jobs), since }) as {
      app: string;
      job: string;
      hour: number;
      scheduled: number;
      outcome: RunOutcome;
      n: number;
    }[];
    return rows.map((r) => ({
      app: r.app,
      job: r.job,
      hour: r.hour,
      scheduled: r.scheduled === 1,
      outcome: r.outcome,
      count: r.n,
    }));
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

  #get(id: string): RunRecord | null {
    const row = this.#s().getRun.get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  #apply(op: LedgerOp): LedgerResult {
    switch (op.kind) {
      case 'insert':
        return this.#insert(op.run);
      case 'start':
        return this.#start(op.id, op.startedAt);
      case 'end':
        return this.#end(op.id, op.patch);
      case 'due':
        return this.#s().dueRun.run(op.id).changes === 1 ? { kind: 'ok' } : { kind: 'gone' };
      case 'withdraw':
        return this.#withdraw(op.id);
      case 'process':
        return this.#s().setProcess.run(op.pid, op.startTime, op.id).changes === 1
          ? { kind: 'ok' }
          : { kind: 'gone' };
      case 'checkpoint':
        this.#s().setCheckpoint.run(op.ref.app, op.ref.job, op.ref.scheduleIndex, op.at);
        return { kind: 'ok' };
    }
  }

  /** Claims `runKey` for `runId`; null when claimed, else why it is held. */
  #claimKey(runKey: string, runId: string, now: number): string | null {
    const s = this.#s();
    if (s.claimKey.run(runKey, runId, now).changes === 1) return null;
    const holder = s.keyHolder.get(runKey) as { run_id: string; state: string };
    return holder.state === 'succeeded'
      ? `run key already succeeded in run ${holder.run_id}`
      : `run key is being run by run ${holder.run_id}`;
  }

  #insert(run: NewRun): LedgerResult {
    const s = this.#s();
    if ((run.trigger === 'schedule' || run.trigger === 'catchup') && run.scheduleIndex !== null) {
      const claimed = s.claimFire.run(
        run.app,
        run.job,
        run.scheduleIndex,
        run.scheduledTime,
        run.id,
      );
      if (claimed.changes === 0) return { kind: 'fire-exists' };
    }
    let row: NewRun = run;
    if (run.phase === 'running') {
      const at = run.startedAt ?? run.createdAt;
      const held = this.#claimKey(run.runKey, run.id, at);
      if (held !== null)
        row = {
          ...run,
          phase: 'ended',
          outcome: 'duplicate',
          startedAt: null,
          endedAt: at,
          error: held,
        };
    } else if (run.phase === 'ended' && run.outcome === 'success') {
      s.succeedKey.run(run.runKey, run.id, run.endedAt ?? run.createdAt);
    }
    const seq = Number(
      s.insertRun.run({
        ...row,
        attemptLog: logText(row.attemptLog),
        outputTruncated: row.outputTruncated ? 1 : 0,
      }).lastInsertRowid,
    );
    return { kind: 'recorded', run: withSeq(row, seq) };
  }

  #withdraw(id: string): LedgerResult {
    const s = this.#s();
    const row = s.withdrawRun.get(id) as
      | {
          runKey: string;
          app: string;
          job: string;
          scheduleIndex: number | null;
          scheduledTime: number;
        }
      | undefined;
    if (!row) return { kind: 'gone' };
    if (row.scheduleIndex !== null)
      s.unclaimFire.run(row.app, row.job, row.scheduleIndex, row.scheduledTime, id);
    s.releaseKey.run(row.runKey, id);
    return { kind: 'ok' };
  }

  #start(id: string, startedAt: number): LedgerResult {
    const s = this.#s();
    const run = this.#get(id);
    if (!run || run.phase !== 'queued') return { kind: 'gone' };
    const held = this.#claimKey(run.runKey, id, startedAt);
    if (held !== null) {
      const patch: EndPatch = { outcome: 'duplicate', endedAt: startedAt, error: held };
      const row = s.endRun.get(this.#endParams(id, patch)) as Row;
      return { kind: 'duplicate', run: fromRow(row) };
    }
    s.startRun.run(startedAt, id);
    return { kind: 'started', run: { ...run, phase: 'running', startedAt, dueAt: null } };
  }

  #end(id: string, patch: EndPatch): LedgerResult {
    const s = this.#s();
    const row = s.endRun.get(this.#endParams(id, patch)) as Row | undefined;
    if (!row) return { kind: 'gone' };
    if (patch.outcome === 'success') s.succeedKey.run(row.runKey, id, patch.endedAt ?? this.#now());
    else s.releaseKey.run(row.runKey, id);
    return { kind: 'ended', run: fromRow(row) };
  }

  /** Parameters of `endRun`: fields the patch leaves out keep their stored value. */
  #endParams(id: string, patch: EndPatch): Record<string, unknown> {
    return {
      id,
      outcome: patch.outcome,
      endedAt: patch.endedAt,
      error: patch.error,
      attempts: patch.attempts ?? null,
      hasStatus: patch.lastStatus === undefined ? 0 : 1,
      lastStatus: patch.lastStatus ?? null,
      attemptLog: patch.attemptLog === undefined ? null : logText(patch.attemptLog),
      hasLog: patch.attemptLog === undefined ? 0 : 1,
      outputTruncated: patch.outputTruncated === undefined ? null : patch.outputTruncated ? 1 : 0,
    };
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
      runningProcesses: p(
        `SELECT id AS runId, app, job, pid, pid_start AS startTime FROM runs
         WHERE phase = 'running' AND pid IS NOT NULL ORDER BY seq`,
      ),
      setProcess: p(`UPDATE runs SET pid = ?, pid_start = ? WHERE id = ? AND phase = 'running'`),
      lastSuccess: p(
        `SELECT MAX(ended_at) FROM runs WHERE app = ? AND job = ? AND outcome = 'success'`,
      ).pluck(),
      lastSuccesses: p(
        `SELECT app, job, MAX(ended_at) AS at FROM runs WHERE outcome = 'success' GROUP BY app, job`,
      ),
      endCrashed: p(
        `UPDATE runs SET phase = 'ended', outcome = 'crashed', ended_at = ?, error = ?
         WHERE phase = 'running'`,
      ),
      releaseRunningKeys: p(`DELETE FROM run_keys WHERE state = 'running'`),
      pruneRuns: p(`DELETE FROM runs WHERE phase = 'ended' AND ended_at < ?`),
      pruneKeys: p(`DELETE FROM run_keys WHERE state = 'succeeded' AND updated_at < ?`),
      pruneFires: p(`DELETE FROM fires WHERE scheduled_time < ?`),
      checkpoints: p(
        'SELECT app, job, schedule_index AS scheduleIndex, at FROM checkpoints ORDER BY app, job',
      ),
      setCheckpoint: p(
        `INSERT INTO checkpoints (app, job, schedule_index, at) VALUES (?, ?, ?, ?)
         ON CONFLICT (app, job, schedule_index) DO UPDATE SET at = MAX(at, excluded.at)`,
      ),
      pausedJobs: p('SELECT app, job FROM paused_jobs ORDER BY app, job'),
      pause: p('INSERT INTO paused_jobs (app, job) VALUES (?, ?) ON CONFLICT DO NOTHING'),
      resume: p('DELETE FROM paused_jobs WHERE app = ? AND job = ?'),
      outcomeCounts: p(
        `SELECT outcome, COUNT(*) AS n FROM runs
         WHERE app = ? AND job = ? AND scheduled_time >= ? AND outcome IS NOT NULL
         GROUP BY outcome`,
      ),
      // the jobs arrive as one JSON array of [app, job] pairs; for each, a correlated
      // subquery walks the (app, job, seq) index backwards, so old history is never read
      // (10,000 jobs × 20 runs: about 0.25 s)
      recentOutcomes: p(
        `WITH j AS (SELECT json_extract(value, '$[0]') AS app, json_extract(value, '$[1]') AS job
                    FROM json_each(@jobs))
         SELECT j.app, j.job, (
           SELECT json_group_array(outcome ORDER BY seq DESC) FROM (
             SELECT seq, outcome FROM runs WHERE app = j.app AND job = j.job AND phase = 'ended'
             ORDER BY seq DESC LIMIT @n)) AS outcomes
         FROM j`,
      ),
      outcomeSummary: p(
        `WITH j AS (SELECT json_extract(value, '$[0]') AS app, json_extract(value, '$[1]') AS job
                    FROM json_each(@jobs))
         SELECT r.app, r.job, (r.scheduled_time / 3600000) * 3600000 AS hour,
                r."trigger" IN ('schedule', 'catchup') AS scheduled, r.outcome, COUNT(*) AS n
         FROM j JOIN runs r ON r.app = j.app AND r.job = j.job AND r.scheduled_time >= @since
         WHERE r.outcome IS NOT NULL AND r.phase = 'ended'
         GROUP BY r.app, r.job, hour, scheduled, r.outcome`,
      ),
      claimFire: p(
        `INSERT INTO fires (app, job, schedule_index, scheduled_time, run_id)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      claimKey: p(
        `INSERT INTO run_keys (run_key, run_id, state, updated_at) VALUES (?, ?, 'running', ?)
         ON CONFLICT DO NOTHING`,
      ),
      keyHolder: p('SELECT run_id, state FROM run_keys WHERE run_key = ?'),
      succeedKey: p(
        `INSERT INTO run_keys (run_key, run_id, state, updated_at) VALUES (?, ?, 'succeeded', ?)
         ON CONFLICT (run_key) DO UPDATE
         SET run_id = excluded.run_id, state = 'succeeded', updated_at = excluded.updated_at`,
      ),
      releaseKey: p(`DELETE FROM run_keys WHERE run_key = ? AND run_id = ? AND state = 'running'`),
      startRun: p(`UPDATE runs SET phase = 'running', started_at = ?, due_at = NULL WHERE id = ?`),
      endRun: p(
        `UPDATE runs SET phase = 'ended', outcome = @outcome, ended_at = @endedAt,
         error = @error, attempts = COALESCE(@attempts, attempts),
         last_status = CASE WHEN @hasStatus THEN @lastStatus ELSE last_status END,
         attempt_log = CASE WHEN @hasLog THEN @attemptLog ELSE attempt_log END,
         output_truncated = COALESCE(@outputTruncated, output_truncated)
         WHERE id = @id AND phase <> 'ended'
         RETURNING ${RUN_COLUMNS}`,
      ),
      dueRun: p(`UPDATE runs SET due_at = NULL WHERE id = ? AND phase = 'queued'`),
      withdrawRun: p(
        `DELETE FROM runs WHERE id = ? AND phase = 'running' AND attempts = 0
         RETURNING run_key AS runKey, app, job, schedule_index AS scheduleIndex,
         scheduled_time AS scheduledTime`,
      ),
      unclaimFire: p(
        `DELETE FROM fires WHERE app = ? AND job = ? AND schedule_index = ? AND scheduled_time = ?
         AND run_id = ?`,
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

/** Jobs as the JSON array of `[app, job]` pairs the batch statements read with `json_each`. */
const jobsJson = (jobs: readonly JobRef[]): string =>
  JSON.stringify(jobs.map((j) => [j.app, j.job]));

function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return LIST_LIMIT.default;
  return Math.min(LIST_LIMIT.max, Math.max(0, Math.trunc(limit)));
}
