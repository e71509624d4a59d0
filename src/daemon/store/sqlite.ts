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
import { prepareStatements, type Prepared, type Stmt } from './sqlite-sql.js';
import * as runs from './sqlite-runs.js';
import {
  applyPragmas,
  integrityCheck,
  ownedTransaction,
  quickCheck,
  readSettings,
  type SqliteSettings,
  type SqliteStoreOptions,
} from './sqlite-connection.js';
import { SqliteOwnership } from './sqlite-owner.js';
import { SqliteWriter } from './sqlite-write.js';
import { makeParts, type SqliteParts } from './sqlite-parts.js';
import { SqliteStoreBase } from './sqlite-base.js';
import type { SkipRecord } from './skip-types.js';
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

export type { SqliteSettings, SqliteStoreOptions } from './sqlite-connection.js';

/** A {@link Store} on one SQLite file. Call {@link SqliteStore.migrate} before anything else. */
export class SqliteStore extends SqliteStoreBase implements Store, OwnedLedger {
  readonly #db: Database.Database;
  #owner: SqliteOwnership | null = null;
  readonly #now: () => number;
  #stmts: Prepared | null = null;
  #parts: SqliteParts | null = null;
  readonly #listStmts = new Map<string, Stmt>();
  readonly #writer = new SqliteWriter(
    () => this.#s(),
    () => this.#now(),
    () => this.parts().backfills,
    () => this.parts().idempotency,
    () => this.parts().skips,
  );

  /**
   * Opens (creating if absent) the database at `path` and applies the
   * durability settings. The parent directory must exist.
   */
  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    super();
    this.#now = options.now ?? Date.now;
    this.#db = new Database(path);
    try {
      applyPragmas(this.#db, options.busyTimeoutMs);
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
    this.#parts ??= makeParts(this.#db, this.#stmts);
  }

  /** The parts (`sqlite-parts.ts`), once {@link migrate} made them. */
  protected parts(): SqliteParts {
    if (!this.#parts) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#parts;
  }

  // ---- skipped instants (SPEC §16), see sqlite-skips.ts ----

  async skips(): Promise<SkipRecord[]> {
    return this.parts().skips.all();
  }

  async addSkip(skip: SkipRecord): Promise<void> {
    this.parts().skips.add(skip);
  }

  async idempotentRun(
    app: string,
    job: string,
    key: string,
    since: number,
  ): Promise<IdempotentRun | null> {
    return this.parts().idempotency.find(app, job, key, since);
  }

  // ---- freezes and pause notes (SPEC §16), see sqlite-freezes.ts ----

  async freezes(): Promise<FreezeRecord[]> {
    return this.parts().freezes.all();
  }

  async setFreeze(freeze: FreezeRecord): Promise<void> {
    this.parts().freezes.set(freeze);
  }

  async removeFreeze(app: string | null, job: string | null): Promise<FreezeRecord | null> {
    return this.parts().freezes.delete(app, job);
  }

  async pauseNotes(): Promise<Map<string, PauseNote>> {
    return this.parts().freezes.pauseNotes();
  }

  // ---- dead letters (SPEC §16), see sqlite-dead-letters.ts ----

  async deadLetters(filter: DeadLetterFilter): Promise<RunRecord[]> {
    return this.parts().deadLetters.list(filter);
  }

  async deadLetterCounts(): Promise<DeadLetterCount[]> {
    return this.parts().deadLetters.countAll();
  }

  async dismissDeadLetters(
    runIds: readonly string[],
    note: string,
    by: string,
    at: number,
  ): Promise<string[]> {
    return this.parts().deadLetters.dismissAll(runIds, note, by, at);
  }

  // ---- backfills (SPEC §16), see sqlite-backfills.ts ----

  async getBackfill(id: string): Promise<BackfillRecord | null> {
    return this.parts().backfills.get(id);
  }

  async listBackfills(filter: BackfillFilter): Promise<BackfillRecord[]> {
    return this.parts().backfills.list(filter);
  }

  async backfillItems(id: string): Promise<BackfillItem[]> {
    return this.parts().backfills.items(id);
  }

  async succeededKeys(runKeys: readonly string[]): Promise<Set<string>> {
    return this.parts().backfills.succeededKeys(runKeys);
  }

  async ranInstants(app: string, job: string, from: number, to: number): Promise<Set<number>> {
    return this.parts().backfills.ranInstants(app, job, from, to);
  }

  // ---- host mode (SPEC §15), see sqlite-host.ts ----

  /** One `BEGIN IMMEDIATE` transaction for the whole batch. */
  async recordReports(writes: readonly ReportWrite[]): Promise<ReportResult[]> {
    if (writes.length === 0) return [];
    const h = this.parts().host;
    return ownedTransaction(this.#db, this.#owner, () => writes.map((w) => h.record(w)));
  }

  async openHostRuns(): Promise<RunRecord[]> {
    return this.parts().host.openHostRuns();
  }

  async lastReports(jobs: readonly JobRef[]): Promise<LastReport[]> {
    return this.parts().host.lastReports(jobs);
  }

  async runOutput(runId: string): Promise<string | null> {
    return this.parts().host.runOutput(runId);
  }

  // ---- notifications (SPEC §12), see sqlite-notifications.ts ----

  recordNotifications(
    app: string,
    job: string,
    plan: (groups: NotifyGroupRow[]) => NotifyPlan,
  ): Promise<NotificationRecord[]> {
    return this.parts().notifications.recordNotifications(app, job, plan);
  }

  dueNotifications(now: number, limit: number): Promise<NotificationRecord[]> {
    return this.parts().notifications.dueNotifications(now, limit);
  }

  nextNotificationAt(): Promise<number | null> {
    return this.parts().notifications.nextNotificationAt();
  }

  updateNotification(id: string, patch: NotificationPatch): Promise<boolean> {
    return this.parts().notifications.updateNotification(id, patch);
  }

  getNotification(id: string): Promise<NotificationRecord | null> {
    return this.parts().notifications.getNotification(id);
  }

  pruneNotifications(endedBefore: number): Promise<number> {
    return this.parts().notifications.pruneNotifications(endedBefore);
  }

  listNotifications(filter: NotificationFilter): Promise<NotificationRecord[]> {
    return this.parts().notifications.listNotifications(filter);
  }

  /** Applies the ops in order in one `BEGIN IMMEDIATE` transaction. */
  async write(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
    if (ops.length === 0) return [];
    this.#s();
    // the owner's writes only, to the file it opened (SPEC §9 item 10)
    return ownedTransaction(this.#db, this.#owner, () => ops.map((op) => this.#writer.apply(op)));
  }

  async getRun(id: string): Promise<RunRecord | null> {
    return this.#get(id);
  }

  async runsByIds(ids: readonly string[]): Promise<RunRecord[]> {
    if (ids.length === 0) return [];
    return runs.runsByIds(this.#s(), ids);
  }

  async activeCounts(): Promise<JobActivity[]> {
    return this.#s().activeCounts.all() as JobActivity[];
  }

  notificationsByIds(ids: readonly string[]): Promise<NotificationRecord[]> {
    return this.parts().notifications.notificationsByIds(ids);
  }

  /** Newest first (by `seq`); `limit` defaults to 100 and is capped at 1000. */
  async listRuns(filter: RunFilter): Promise<RunRecord[]> {
    this.#s();
    return runs.listRuns(this.#db, this.#listStmts, filter);
  }

  async queuedRuns(app?: string, job?: string): Promise<RunRecord[]> {
    return runs.queuedRuns(this.#s(), app, job);
  }

  async runningRuns(): Promise<RunRecord[]> {
    return runs.runningRuns(this.#s());
  }

  async runningProcesses(): Promise<RunProcess[]> {
    return this.#s().runningProcesses.all() as RunProcess[];
  }

  async keyHolder(
    runKey: string,
  ): Promise<{ runId: string; state: 'running' | 'succeeded' } | null> {
    return runs.keyHolder(this.#s(), runKey);
  }

  async lastSuccess(app: string, job: string): Promise<number | null> {
    return (this.#s().lastSuccess.get(app, job) as number | null | undefined) ?? null;
  }

  async lastSuccesses(): Promise<Map<string, number>> {
    return runs.lastSuccesses(this.#s());
  }

  /** Every `running` run becomes `ended`/`crashed`, and their keys are released, in one transaction. */
  async endCrashed(now: number, error: string): Promise<number> {
    return runs.endCrashed(this.#db, this.#s(), now, error);
  }

  async pruneRuns(endedBefore: number): Promise<number> {
    return runs.pruneRuns(this.#db, this.#s(), endedBefore);
  }

  async checkpoints(): Promise<Checkpoint[]> {
    return this.#s().checkpoints.all() as Checkpoint[];
  }

  async pausedJobs(): Promise<Set<string>> {
    return runs.pausedJobs(this.#s());
  }

  async setPaused(app: string, job: string, paused: boolean, note?: PauseNote): Promise<void> {
    const s = this.#s();
    if (paused && note) this.parts().freezes.pauseWith(app, job, note);
    else (paused ? s.pause : s.resume).run(app, job);
  }

  /** Counts by outcome of the job's ended runs whose `scheduledTime >= since`. */
  async outcomeCounts(
    app: string,
    job: string,
    since: number,
  ): Promise<Partial<Record<RunOutcome, number>>> {
    return runs.outcomeCounts(this.#s(), app, job, since);
  }

  /** One statement: each job's newest ended runs through its `(app, job, seq)` index range. */
  async recentOutcomes(jobs: readonly JobRef[], perJob: number): Promise<JobOutcomes[]> {
    if (jobs.length === 0 || perJob < 1) return [];
    return runs.recentOutcomes(this.#s(), jobs, perJob);
  }

  /** One statement: each job's `(app, job, scheduled_time)` index range from `since`. */
  async outcomeSummary(jobs: readonly JobRef[], since: number): Promise<OutcomeGroup[]> {
    if (jobs.length === 0) return [];
    return runs.outcomeSummary(this.#s(), jobs, since);
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
    return quickCheck(this.#db);
  }

  #ownership(): SqliteOwnership {
    if (!this.#owner) throw new Error('SqliteStore: the store is closed');
    return this.#owner;
  }

  /** The connection's durability settings as SQLite reports them (diagnostics, tests). */
  settings(): SqliteSettings {
    return readSettings(this.#db);
  }

  /** The rows of `schema_migrations`, ascending by version. */
  appliedMigrations(): AppliedMigration[] {
    return appliedMigrations(this.#db);
  }

  /** `PRAGMA integrity_check`: `['ok']` for a sound file, else SQLite's complaints. */
  integrityCheck(): string[] {
    return integrityCheck(this.#db);
  }

  #s(): Prepared {
    if (!this.#stmts) throw new Error('SqliteStore: call migrate() before using the store');
    return this.#stmts;
  }

  #get(id: string): RunRecord | null {
    return runs.getRun(this.#s(), id);
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
