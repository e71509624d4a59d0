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
import { clampListLimit } from './limits.js';
import {
  FILTER_CONDITIONS,
  fromRow,
  jobsJson,
  prepareStatements,
  RUN_COLUMNS,
  type Prepared,
  type Row,
  type Stmt,
} from './sqlite-sql.js';
import { SqliteOwnership } from './sqlite-owner.js';
import { SqliteWriter } from './sqlite-write.js';
import { SqliteNotifications } from './sqlite-notifications.js';
import { SqliteAccess } from './sqlite-access.js';
import type {
  AuditFilter,
  AuditRecord,
  CreateTokenResult,
  LoginState,
  NewAuditRecord,
  TokenRecord,
} from './access-types.js';
import { SqliteHostRuns } from './sqlite-host.js';
import { SqliteBackfills } from './sqlite-backfills.js';
import { SqliteDeadLetters } from './sqlite-dead-letters.js';
import { SqliteFreezes } from './sqlite-freezes.js';
import { SqliteSkips } from './sqlite-skips.js';
import type { SkipRecord } from './skip-types.js';
import { SqliteIdempotency } from './sqlite-idempotency.js';
import type { IdempotentRun } from './idempotency-types.js';
import type { FreezeRecord, PauseNote } from './freeze-types.js';
import type {
  DeadLetterCount,
  DeadLetterFilter,
  BackfillFilter,
  BackfillItem,
  BackfillRecord,
  Checkpoint,
  JobActivity,
  JobOutcomes,
  JobRef,
  LastReport,
  LedgerOwner,
  OutcomeGroup,
  LedgerOp,
  LedgerResult,
  NotificationFilter,
  NotificationPatch,
  NotificationRecord,
  NotifyGroupRow,
  NotifyPlan,
  OwnedLedger,
  OwnershipClaim,
  RunFilter,
  RunOutcome,
  RunProcess,
  RunRecord,
  ReportResult,
  ReportWrite,
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

/** A {@link Store} on one SQLite file. Call {@link SqliteStore.migrate} before anything else. */
export class SqliteStore implements Store, OwnedLedger {
  readonly #db: Database.Database;
  #owner: SqliteOwnership | null = null;
  readonly #now: () => number;
  #stmts: Prepared | null = null;
  #notifications: SqliteNotifications | null = null;
  #access: SqliteAccess | null = null;
  #host: SqliteHostRuns | null = null;
  #backfills: SqliteBackfills | null = null;
  #deadLetters: SqliteDeadLetters | null = null;
  #freezes: SqliteFreezes | null = null;
  #idempotency: SqliteIdempotency | null = null;
  #skips: SqliteSkips | null = null;
  readonly #listStmts = new Map<string, Stmt>();
  readonly #writer = new SqliteWriter(
    () => this.#s(),
    () => this.#now(),
    () => this.#b(),
    () => this.#i(),
    () => this.#k(),
  );

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
      this.#owner = new SqliteOwnership(this.#db, path);
    } catch (err) {
      this.#db.close();
      throw err;
    }
  }

  /** Runs pending migrations (each in one `BEGIN IMMEDIATE` transaction) and prepares statements. */
  async migrate(): Promise<void> {
    migrateSqlite(this.#db, undefined, this.#now);
    this.#stmts ??= prepareStatements(this.#db);
    this.#notifications ??= new SqliteNotifications(this.#db);
    this.#access ??= new SqliteAccess(this.#db);
    this.#host ??= new SqliteHostRuns(this.#db, this.#stmts);
    this.#backfills ??= new SqliteBackfills(this.#db);
    this.#deadLetters ??= new SqliteDeadLetters(this.#db);
    this.#freezes ??= new SqliteFreezes(this.#db);
    this.#idempotency ??= new SqliteIdempotency(this.#db);
    this.#skips ??= new SqliteSkips(this.#db);
  }

  // ---- skipped instants (SPEC §16), see sqlite-skips.ts ----

  #k(): SqliteSkips {
    if (!this.#skips) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#skips;
  }

  async skips(): Promise<SkipRecord[]> {
    return this.#k().all();
  }

  async addSkip(skip: SkipRecord): Promise<void> {
    this.#k().add(skip);
  }

  #i(): SqliteIdempotency {
    if (!this.#idempotency) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#idempotency;
  }

  async idempotentRun(
    app: string,
    job: string,
    key: string,
    since: number,
  ): Promise<IdempotentRun | null> {
    return this.#i().find(app, job, key, since);
  }

  // ---- freezes and pause notes (SPEC §16), see sqlite-freezes.ts ----

  #f(): SqliteFreezes {
    if (!this.#freezes) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#freezes;
  }

  async freezes(): Promise<FreezeRecord[]> {
    return this.#f().all();
  }

  async setFreeze(freeze: FreezeRecord): Promise<void> {
    this.#f().set(freeze);
  }

  async removeFreeze(app: string | null, job: string | null): Promise<FreezeRecord | null> {
    return this.#f().delete(app, job);
  }

  async pauseNotes(): Promise<Map<string, PauseNote>> {
    return this.#f().pauseNotes();
  }

  // ---- dead letters (SPEC §16), see sqlite-dead-letters.ts ----

  #d(): SqliteDeadLetters {
    if (!this.#deadLetters) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#deadLetters;
  }

  async deadLetters(filter: DeadLetterFilter): Promise<RunRecord[]> {
    return this.#d().list(filter);
  }

  async deadLetterCounts(): Promise<DeadLetterCount[]> {
    return this.#d().countAll();
  }

  async dismissDeadLetters(
    runIds: readonly string[],
    note: string,
    by: string,
    at: number,
  ): Promise<string[]> {
    return this.#d().dismissAll(runIds, note, by, at);
  }

  // ---- backfills (SPEC §16), see sqlite-backfills.ts ----

  #b(): SqliteBackfills {
    if (!this.#backfills) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#backfills;
  }

  async getBackfill(id: string): Promise<BackfillRecord | null> {
    return this.#b().get(id);
  }

  async listBackfills(filter: BackfillFilter): Promise<BackfillRecord[]> {
    return this.#b().list(filter);
  }

  async backfillItems(id: string): Promise<BackfillItem[]> {
    return this.#b().items(id);
  }

  async succeededKeys(runKeys: readonly string[]): Promise<Set<string>> {
    return this.#b().succeededKeys(runKeys);
  }

  async ranInstants(app: string, job: string, from: number, to: number): Promise<Set<number>> {
    return this.#b().ranInstants(app, job, from, to);
  }

  // ---- host mode (SPEC §15), see sqlite-host.ts ----

  #h(): SqliteHostRuns {
    if (!this.#host) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#host;
  }

  /** One `BEGIN IMMEDIATE` transaction for the whole batch. */
  async recordReports(writes: readonly ReportWrite[]): Promise<ReportResult[]> {
    if (writes.length === 0) return [];
    const h = this.#h();
    return this.#db
      .transaction(() => {
        this.#owner?.check();
        return writes.map((w) => h.record(w));
      })
      .immediate();
  }

  async openHostRuns(): Promise<RunRecord[]> {
    return this.#h().openHostRuns();
  }

  async lastReports(jobs: readonly JobRef[]): Promise<LastReport[]> {
    return this.#h().lastReports(jobs);
  }

  async runOutput(runId: string): Promise<string | null> {
    return this.#h().runOutput(runId);
  }

  // ---- tokens, audit, logins (SPEC §18), see sqlite-access.ts ----

  #a(): SqliteAccess {
    if (!this.#access) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#access;
  }

  createToken(token: TokenRecord): Promise<CreateTokenResult> {
    return this.#a().createToken(token);
  }

  tokenByHash(hash: string): Promise<TokenRecord | null> {
    return this.#a().tokenByHash(hash);
  }

  tokenByName(name: string): Promise<TokenRecord | null> {
    return this.#a().tokenByName(name);
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.#a().listTokens();
  }

  revokeToken(name: string, at: number): Promise<boolean> {
    return this.#a().revokeToken(name, at);
  }

  ensureFileToken(name: string, at: number): Promise<void> {
    return this.#a().ensureFileToken(name, at);
  }

  appendAudit(row: NewAuditRecord): Promise<AuditRecord> {
    return this.#a().appendAudit(row);
  }

  listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    return this.#a().listAudit(filter);
  }

  pruneAudit(before: number): Promise<number> {
    return this.#a().pruneAudit(before);
  }

  putLoginState(login: LoginState): Promise<void> {
    return this.#a().putLoginState(login);
  }

  takeLoginState(state: string, now: number): Promise<LoginState | null> {
    return this.#a().takeLoginState(state, now);
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
    return this.#db
      .transaction(() => {
        this.#owner?.check(); // the owner's writes only, to the file it opened (SPEC §9 item 10)
        return ops.map((op) => this.#writer.apply(op));
      })
      .immediate();
  }

  async getRun(id: string): Promise<RunRecord | null> {
    return this.#get(id);
  }

  async runsByIds(ids: readonly string[]): Promise<RunRecord[]> {
    if (ids.length === 0) return [];
    return (this.#s().runsByIds.all(JSON.stringify(ids)) as Row[]).map(fromRow);
  }

  async activeCounts(): Promise<JobActivity[]> {
    return this.#s().activeCounts.all() as JobActivity[];
  }

  notificationsByIds(ids: readonly string[]): Promise<NotificationRecord[]> {
    return this.#n().notificationsByIds(ids);
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
    const params: Record<string, unknown> = { limit: clampListLimit(filter.limit) };
    for (const [field] of given)
      params[field] = field === 'outcomes' ? JSON.stringify(filter.outcomes) : filter[field];
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
        s.pruneOutputs.run(endedBefore);
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

  async setPaused(app: string, job: string, paused: boolean, note?: PauseNote): Promise<void> {
    const s = this.#s();
    if (paused && note) this.#f().pauseWith(app, job, note);
    else (paused ? s.pause : s.resume).run(app, job);
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
    this.#owner?.close();
    if (this.#db.open) this.#db.close();
  }

  // ---- ownership (SPEC §9 item 10, see sqlite-owner.ts) ----

  async claimOwnership(
    me: LedgerOwner,
    isGone: (holder: LedgerOwner) => boolean,
  ): Promise<OwnershipClaim> {
    return this.#ownership().claim(me, isGone);
  }

  async heartbeat(now: number): Promise<void> {
    this.#ownership().heartbeat(now);
  }

  async releaseOwnership(): Promise<void> {
    this.#owner?.release();
  }

  /** This ledger's id (`meta.ledger_id`), made by `make` on first read. */
  ledgerId(make: () => string): { id: string; created: boolean } {
    return this.#ownership().ledgerId(make);
  }

  /** `PRAGMA quick_check`: `['ok']` for a sound file, else SQLite's complaints. */
  quickCheck(): string[] {
    const rows = this.#db.pragma('quick_check') as { quick_check: string }[];
    return rows.map((r) => r.quick_check);
  }

  #ownership(): SqliteOwnership {
    if (!this.#owner) throw new Error('SqliteStore: the store is closed');
    return this.#owner;
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
