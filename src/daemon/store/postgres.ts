/**
 * The PostgreSQL {@link Store} (SPEC §10): the same ledger, claims and
 * contract as the SQLite store, on a shared database so several `cronix serve`
 * replicas can take turns leading. Every write is one transaction; when the
 * store carries a {@link Fence} (the leader's epoch), the transaction first
 * checks, holding a share lock on the lease row, that the lease is still that
 * holder's, with that epoch, unexpired on the database's clock — else nothing
 * is written, {@link FencedError} is thrown and {@link PostgresStore.refused}
 * resolves, and the replica steps down. A fenced transaction also sets
 * `cronix.epoch`, which stamps the rows of `runs` it writes (`leader_epoch`,
 * see `pg/write.ts`).
 * The lease, commands and change feed are {@link PostgresStore.coordination}; the run reads
 * and run-wide maintenance are `pg/runs.ts`.
 */
import type pg from 'pg';
import {
  createPool,
  explainPgError,
  parsePgUrl,
  PgStoreError,
  type PgTarget,
} from './pg/connect.js';
import { FencedError, type Coordination, type Fence, type TermStore } from './coordination.js';
import { PgCoordination } from './pg/coordination.js';
import { migratePg } from './pg/migrate.js';
import * as host from './pg/host.js';
import * as outbox from './pg/notifications.js';
import { PgAccess } from './pg/access.js';
import * as backfills from './pg/backfills.js';
import * as deadLetters from './pg/dead-letters.js';
import * as freezes from './pg/freezes.js';
import { addSkipPg, skipsPg } from './pg/skips.js';
import type { SkipRecord } from './skip-types.js';
import { idempotentRunPg } from './pg/idempotency.js';
import type { IdempotentRun } from './idempotency-types.js';
import type { FreezeRecord, PauseNote } from './freeze-types.js';
import { applyOps } from './pg/write.js';
import { inTransaction } from './pg/transaction.js';
import * as runs from './pg/runs.js';
import type {
  AuditFilter,
  AuditRecord,
  CreateTokenResult,
  LoginState,
  NewAuditRecord,
  TokenRecord,
} from './access-types.js';
import type {
  BackfillFilter,
  BackfillItem,
  BackfillRecord,
  Checkpoint,
  DeadLetterCount,
  DeadLetterFilter,
  JobActivity,
  JobOutcomes,
  JobRef,
  LastReport,
  LedgerOp,
  OutcomeGroup,
  LedgerResult,
  NotificationFilter,
  NotificationPatch,
  NotificationRecord,
  NotifyGroupRow,
  NotifyPlan,
  RunFilter,
  RunOutcome,
  RunProcess,
  RunRecord,
  ReportResult,
  ReportWrite,
  Store,
} from './types.js';

export { FencedError, type Fence } from './coordination.js';

/** Options of {@link PostgresStore.open}. */
export interface PgStoreOptions {
  /** Pool size. Default 4. */
  poolSize?: number;
  /** Clock for `schema_migrations.applied_at`. */
  now?: () => number;
  /** Connection errors of idle pooled connections (logged by the daemon). */
  onIdleError?: (message: string) => void;
}

/** A {@link Store} on one PostgreSQL schema. */
export class PostgresStore implements Store, TermStore {
  #revoked = false;
  #refuse: (reason: string) => void = () => undefined;
  /** Resolves, with the reason, when the fence first refuses a write (never, unfenced). */
  readonly refused: Promise<string> = new Promise((resolve) => (this.#refuse = resolve));
  #coordination: PgCoordination | null = null;
  #access: PgAccess | null = null;

  private constructor(
    readonly target: PgTarget,
    readonly pool: pg.Pool,
    private readonly options: PgStoreOptions,
    readonly fence: Fence | null,
    private readonly owner: boolean,
  ) {}

  /** A store on `url` (`postgres://…?schema=NAME`); connects lazily. */
  static open(url: string, options: PgStoreOptions = {}): PostgresStore {
    const target = parsePgUrl(url);
    const pool = createPool(target, {
      ...(options.poolSize !== undefined ? { max: options.poolSize } : {}),
      onIdleError: (err) => options.onIdleError?.(explainPgError(err, target)),
    });
    return new PostgresStore(target, pool, options, null, true);
  }

  /**
   * The same store, every write of which is fenced by `fence`. Shares the
   * pool; closing it does not close the pool. {@link revoke} ends it.
   */
  fenced(fence: Fence): PostgresStore {
    return new PostgresStore(this.target, this.pool, this.options, fence, false);
  }

  /** After this, every write of this (fenced) store throws {@link FencedError} without asking. */
  revoke(): void {
    this.#revoked = true;
  }

  /** The lease, replicas, commands and change feed of this schema (one per store). */
  coordination(): Coordination {
    this.#coordination ??= new PgCoordination(this.target, this.pool, (fence) =>
      this.fenced(fence),
    );
    return this.#coordination;
  }

  // ---- tokens, audit, logins (SPEC §18, unfenced), see pg/access.ts ----

  get #a(): PgAccess {
    this.#access ??= new PgAccess(this.pool);
    return this.#access;
  }

  createToken(token: TokenRecord): Promise<CreateTokenResult> {
    return this.#a.createToken(token);
  }

  tokenByHash(hash: string): Promise<TokenRecord | null> {
    return this.#a.tokenByHash(hash);
  }

  tokenByName(name: string): Promise<TokenRecord | null> {
    return this.#a.tokenByName(name);
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.#a.listTokens();
  }

  revokeToken(name: string, at: number): Promise<boolean> {
    return this.#a.revokeToken(name, at);
  }

  ensureFileToken(name: string, at: number): Promise<void> {
    return this.#a.ensureFileToken(name, at);
  }

  appendAudit(row: NewAuditRecord): Promise<AuditRecord> {
    return this.#a.appendAudit(row);
  }

  listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    return this.#a.listAudit(filter);
  }

  pruneAudit(before: number): Promise<number> {
    return this.#a.pruneAudit(before);
  }

  putLoginState(login: LoginState): Promise<void> {
    return this.#a.putLoginState(login);
  }

  takeLoginState(state: string, now: number): Promise<LoginState | null> {
    return this.#a.takeLoginState(state, now);
  }

  /** Runs migrations under an advisory lock; explains connection and privilege failures. */
  async migrate(): Promise<void> {
    const client = await this.#connect();
    try {
      await migratePg(client, this.target.schema, this.options.now);
    } catch (err) {
      if (err instanceof Error && err.name === 'SchemaTooNewError') throw err;
      throw new PgStoreError(explainPgError(err, this.target, 'CREATE SCHEMA / CREATE TABLE'));
    } finally {
      client.release();
    }
  }

  async write(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
    if (ops.length === 0) return [];
    return this.#transaction((client) => applyOps(client, ops));
  }

  async getRun(id: string): Promise<RunRecord | null> {
    return runs.getRunPg(this.pool, id);
  }

  /** The runs of `ids` that exist, in one statement (a standby's live view, SPEC §10, §13). */
  async runsByIds(ids: readonly string[]): Promise<RunRecord[]> {
    return runs.runsByIdsPg(this.pool, ids);
  }

  async activeCounts(): Promise<JobActivity[]> {
    return runs.activeCountsPg(this.pool);
  }

  async listRuns(filter: RunFilter): Promise<RunRecord[]> {
    return runs.listRunsPg(this.pool, filter);
  }

  async queuedRuns(app?: string, job?: string): Promise<RunRecord[]> {
    return runs.queuedRunsPg(this.pool, app, job);
  }

  async runningRuns(): Promise<RunRecord[]> {
    return runs.runningRunsPg(this.pool);
  }

  async runningProcesses(): Promise<RunProcess[]> {
    return runs.runningProcessesPg(this.pool);
  }

  async keyHolder(
    runKey: string,
  ): Promise<{ runId: string; state: 'running' | 'succeeded' } | null> {
    return runs.keyHolderPg(this.pool, runKey);
  }

  async lastSuccess(app: string, job: string): Promise<number | null> {
    return runs.lastSuccessPg(this.pool, app, job);
  }

  async lastSuccesses(): Promise<Map<string, number>> {
    return runs.lastSuccessesPg(this.pool);
  }

  async endCrashed(now: number, error: string): Promise<number> {
    return this.#transaction((client) => runs.endCrashedPg(client, now, error));
  }

  async checkpoints(): Promise<Checkpoint[]> {
    return runs.checkpointsPg(this.pool);
  }

  async pausedJobs(): Promise<Set<string>> {
    return runs.pausedJobsPg(this.pool);
  }

  async setPaused(app: string, job: string, paused: boolean, note?: PauseNote): Promise<void> {
    await this.#transaction((client) => runs.setPausedPg(client, app, job, paused, note));
  }

  async pruneRuns(endedBefore: number): Promise<number> {
    return this.#transaction((client) => runs.pruneRunsPg(client, endedBefore));
  }

  async outcomeCounts(
    app: string,
    job: string,
    since: number,
  ): Promise<Partial<Record<RunOutcome, number>>> {
    return runs.outcomeCountsPg(this.pool, app, job, since);
  }

  /** One statement: each job's newest ended runs through its `(app, job, seq)` index. */
  async recentOutcomes(jobs: readonly JobRef[], perJob: number): Promise<JobOutcomes[]> {
    return runs.recentOutcomesPg(this.pool, jobs, perJob);
  }

  /** One statement: each job's `(app, job, scheduled_time)` index range from `since`. */
  async outcomeSummary(jobs: readonly JobRef[], since: number): Promise<OutcomeGroup[]> {
    return runs.outcomeSummaryPg(this.pool, jobs, since);
  }

  /** Closes the pool (a fenced view leaves it to its owner). */
  async close(): Promise<void> {
    if (this.owner) await this.pool.end().catch(() => undefined);
  }

  // ---- host mode (SPEC §15), see pg/host.ts ----

  /** One transaction for the batch (fenced only on a fenced view: the ingest uses the root). */
  recordReports(writes: readonly ReportWrite[]): Promise<ReportResult[]> {
    if (writes.length === 0) return Promise.resolve([]);
    return this.#transaction((client) => host.recordPg(client, writes));
  }

  openHostRuns(): Promise<RunRecord[]> {
    return host.openPg(this.pool);
  }

  lastReports(jobs: readonly JobRef[]): Promise<LastReport[]> {
    return host.lastPg(this.pool, jobs);
  }

  runOutput(runId: string): Promise<string | null> {
    return host.outputPg(this.pool, runId);
  }

  // ---- notifications (SPEC §12), see pg/notifications.ts; writes are fenced ----

  recordNotifications(
    app: string,
    job: string,
    plan: (groups: NotifyGroupRow[]) => NotifyPlan,
  ): Promise<NotificationRecord[]> {
    return this.#transaction((client) => outbox.recordPg(client, app, job, plan));
  }

  dueNotifications(now: number, limit: number): Promise<NotificationRecord[]> {
    return outbox.duePg(this.pool, now, limit);
  }

  nextNotificationAt(): Promise<number | null> {
    return outbox.nextPg(this.pool);
  }

  updateNotification(id: string, patch: NotificationPatch): Promise<boolean> {
    return this.#transaction((client) => outbox.updatePg(client, id, patch));
  }

  /** The notifications of `ids` that exist, in one statement (a standby's live view). */
  notificationsByIds(ids: readonly string[]): Promise<NotificationRecord[]> {
    return outbox.byIdsPg(this.pool, ids);
  }

  getNotification(id: string): Promise<NotificationRecord | null> {
    return outbox.getPg(this.pool, id);
  }

  pruneNotifications(endedBefore: number): Promise<number> {
    return this.#transaction((client) => outbox.prunePg(client, endedBefore));
  }

  listNotifications(filter: NotificationFilter): Promise<NotificationRecord[]> {
    return outbox.listPg(this.pool, filter);
  }

  // ---- backfills (SPEC §16), see pg/backfills.ts ----

  getBackfill(id: string): Promise<BackfillRecord | null> {
    return backfills.getBackfillPg(this.pool, id);
  }

  listBackfills(filter: BackfillFilter): Promise<BackfillRecord[]> {
    return backfills.listBackfillsPg(this.pool, filter);
  }

  backfillItems(id: string): Promise<BackfillItem[]> {
    return backfills.backfillItemsPg(this.pool, id);
  }

  succeededKeys(runKeys: readonly string[]): Promise<Set<string>> {
    return backfills.succeededKeysPg(this.pool, runKeys);
  }

  ranInstants(app: string, job: string, from: number, to: number): Promise<Set<number>> {
    return backfills.ranInstantsPg(this.pool, app, job, from, to);
  }

  // ---- dead letters (SPEC §16), see pg/dead-letters.ts ----

  idempotentRun(
    app: string,
    job: string,
    key: string,
    since: number,
  ): Promise<IdempotentRun | null> {
    return idempotentRunPg(this.pool, app, job, key, since);
  }

  // ---- skipped instants (SPEC §16), see pg/skips.ts ----

  skips(): Promise<SkipRecord[]> {
    return skipsPg(this.pool);
  }

  addSkip(skip: SkipRecord): Promise<void> {
    return this.#transaction((client) => addSkipPg(client, skip));
  }

  // ---- freezes and pause notes (SPEC §16), see pg/freezes.ts ----

  freezes(): Promise<FreezeRecord[]> {
    return freezes.freezesPg(this.pool);
  }

  setFreeze(freeze: FreezeRecord): Promise<void> {
    return this.#transaction((client) => freezes.setFreezePg(client, freeze));
  }

  removeFreeze(app: string | null, job: string | null): Promise<FreezeRecord | null> {
    return this.#transaction((client) => freezes.removeFreezePg(client, app, job));
  }

  pauseNotes(): Promise<Map<string, PauseNote>> {
    return freezes.pauseNotesPg(this.pool);
  }

  deadLetters(filter: DeadLetterFilter): Promise<RunRecord[]> {
    return deadLetters.deadLettersPg(this.pool, filter);
  }

  deadLetterCounts(): Promise<DeadLetterCount[]> {
    return deadLetters.deadLetterCountsPg(this.pool);
  }

  dismissDeadLetters(
    runIds: readonly string[],
    note: string,
    by: string,
    at: number,
  ): Promise<string[]> {
    return this.#transaction((client) => deadLetters.dismissPg(client, runIds, note, by, at));
  }

  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw new PgStoreError(explainPgError(err, this.target));
    }
  }

  /** Runs `work` in one transaction, after the fence check when fenced (`pg/transaction.ts`). */
  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (this.#revoked) throw new FencedError(`epoch ${this.fence?.epoch} was revoked`);
    const client = await this.#connect();
    return inTransaction(client, this.target, this.fence, (reason) => this.#refuse(reason), work);
  }
}
