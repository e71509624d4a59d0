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
 * The lease, commands and change feed are {@link PostgresStore.coordination}.
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
import { clampListLimit } from './limits.js';
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
import { applyOps, fromPgRow, PG_RUN_COLUMNS, WRITER_EPOCH } from './pg/write.js';
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

const FILTERS: readonly (readonly [keyof RunFilter, string, string])[] = [
  ['app', 'app', 'text'],
  ['job', 'job', 'text'],
  ['outcome', 'outcome', 'text'],
  ['outcomes', 'outcome = ANY', 'text[]'],
  ['phase', 'phase', 'text'],
  ['beforeSeq', 'seq <', 'bigint'],
];

type Row = Parameters<typeof fromPgRow>[0];

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
    const { rows } = await this.pool.query<Row>(
      `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE id = $1`,
      [id],
    );
    return rows[0] ? fromPgRow(rows[0]) : null;
  }

  /** The runs of `ids` that exist, in one statement (a standby's live view, SPEC §10, §13). */
  async runsByIds(ids: readonly string[]): Promise<RunRecord[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<Row>(
      `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE id = ANY($1::text[]) ORDER BY seq`,
      [ids],
    );
    return rows.map(fromPgRow);
  }

  async activeCounts(): Promise<JobActivity[]> {
    const { rows } = await this.pool.query<JobActivity>(
      `SELECT app, job, COUNT(*) FILTER (WHERE phase = 'running')::int AS running,
         COUNT(*) FILTER (WHERE phase = 'queued')::int AS queued
       FROM runs WHERE phase IN ('queued', 'running') GROUP BY app, job ORDER BY app, job`,
    );
    return rows;
  }

  async listRuns(filter: RunFilter): Promise<RunRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const [field, column, type] of FILTERS) {
      const v = filter[field];
      if (v === undefined) continue;
      params.push(v);
      where.push(
        column.endsWith('<')
          ? `${column} $${params.length}::${type}`
          : column.endsWith('ANY')
            ? `${column}($${params.length}::${type})`
            : `${column} = $${params.length}::${type}`,
      );
    }
    params.push(clampListLimit(filter.limit));
    const { rows } = await this.pool.query<Row>(
      `SELECT ${PG_RUN_COLUMNS} FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map(fromPgRow);
  }

  async queuedRuns(app?: string, job?: string): Promise<RunRecord[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE phase = 'queued'
       AND ($1::text IS NULL OR app = $1) AND ($2::text IS NULL OR job = $2) ORDER BY seq`,
      [app ?? null, job ?? null],
    );
    return rows.map(fromPgRow);
  }

  async runningRuns(): Promise<RunRecord[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE phase IN ('planned', 'running')
       AND "trigger" <> 'host' ORDER BY seq`,
    );
    return rows.map(fromPgRow);
  }

  async runningProcesses(): Promise<RunProcess[]> {
    const { rows } = await this.pool.query<RunProcess>(
      `SELECT id AS "runId", app, job, pid, pid_start AS "startTime" FROM runs
       WHERE phase IN ('planned', 'running') AND pid IS NOT NULL AND "trigger" <> 'host'
       ORDER BY seq`,
    );
    return rows;
  }

  async keyHolder(
    runKey: string,
  ): Promise<{ runId: string; state: 'running' | 'succeeded' } | null> {
    const { rows } = await this.pool.query<{ runId: string; state: 'running' | 'succeeded' }>(
      `SELECT run_id AS "runId", state FROM run_keys WHERE run_key = $1`,
      [runKey],
    );
    return rows[0] ?? null;
  }

  async lastSuccess(app: string, job: string): Promise<number | null> {
    const { rows } = await this.pool.query<{ at: number | null }>(
      `SELECT MAX(ended_at) AS at FROM runs WHERE app = $1 AND job = $2 AND outcome = 'success'`,
      [app, job],
    );
    return rows[0]?.at ?? null;
  }

  async lastSuccesses(): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ app: string; job: string; at: number }>(
      `SELECT app, job, MAX(ended_at) AS at FROM runs WHERE outcome = 'success' GROUP BY app, job`,
    );
    return new Map(rows.map((r) => [`${r.app}/${r.job}`, r.at]));
  }

  async endCrashed(now: number, error: string): Promise<number> {
    return this.#transaction(async (client) => {
      const r = await client.query(
        `UPDATE runs SET phase = 'ended', outcome = 'crashed', ended_at = $1, error = $2,
           leader_epoch = ${WRITER_EPOCH} WHERE phase IN ('planned', 'running')
           AND "trigger" <> 'host'`,
        [now, error],
      );
      await client.query(`DELETE FROM run_keys WHERE state = 'running'`);
      return r.rowCount ?? 0;
    });
  }

  async checkpoints(): Promise<Checkpoint[]> {
    const { rows } = await this.pool.query<Checkpoint>(
      `SELECT app, job, schedule_index AS "scheduleIndex", at FROM checkpoints ORDER BY app, job`,
    );
    return rows;
  }

  async pausedJobs(): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ app: string; job: string }>(
      'SELECT app, job FROM paused_jobs ORDER BY app, job',
    );
    return new Set(rows.map((r) => `${r.app}/${r.job}`));
  }

  async setPaused(app: string, job: string, paused: boolean, note?: PauseNote): Promise<void> {
    await this.#transaction(async (client) => {
      if (paused && note) return freezes.pauseWithPg(client, app, job, note);
      await client.query(
        paused
          ? 'INSERT INTO paused_jobs (app, job) VALUES ($1, $2) ON CONFLICT DO NOTHING'
          : 'DELETE FROM paused_jobs WHERE app = $1 AND job = $2',
        [app, job],
      );
    });
  }

  async pruneRuns(endedBefore: number): Promise<number> {
    return this.#transaction(async (client) => {
      const r = await client.query(`DELETE FROM runs WHERE phase = 'ended' AND ended_at < $1`, [
        endedBefore,
      ]);
      await client.query(`DELETE FROM run_keys WHERE state = 'succeeded' AND updated_at < $1`, [
        endedBefore,
      ]);
      await client.query(`DELETE FROM fires WHERE scheduled_time < $1`, [endedBefore]);
      await client.query(`DELETE FROM run_outputs WHERE created_at < $1`, [endedBefore]);
      return r.rowCount ?? 0;
    });
  }

  async outcomeCounts(
    app: string,
    job: string,
    since: number,
  ): Promise<Partial<Record<RunOutcome, number>>> {
    const { rows } = await this.pool.query<{ outcome: RunOutcome; n: number }>(
      `SELECT outcome, COUNT(*) AS n FROM runs
       WHERE app = $1 AND job = $2 AND scheduled_time >= $3 AND outcome IS NOT NULL
       GROUP BY outcome`,
      [app, job, since],
    );
    const out: Partial<Record<RunOutcome, number>> = {};
    for (const r of rows) out[r.outcome] = r.n;
    return out;
  }

  /** One statement: each job's newest ended runs through its `(app, job, seq)` index. */
  async recentOutcomes(jobs: readonly JobRef[], perJob: number): Promise<JobOutcomes[]> {
    if (jobs.length === 0 || perJob < 1) return [];
    const { rows } = await this.pool.query<JobOutcomes>(
      `SELECT j.app, j.job, r.outcomes
       FROM unnest($1::text[], $2::text[]) AS j(app, job)
       CROSS JOIN LATERAL (
         SELECT array_agg(outcome ORDER BY seq DESC) AS outcomes FROM (
           SELECT seq, outcome FROM runs WHERE app = j.app AND job = j.job AND phase = 'ended'
           ORDER BY seq DESC LIMIT $3) x) r
       WHERE r.outcomes IS NOT NULL`,
      [jobs.map((j) => j.app), jobs.map((j) => j.job), Math.trunc(perJob)],
    );
    return rows;
  }

  /** One statement: each job's `(app, job, scheduled_time)` index range from `since`. */
  async outcomeSummary(jobs: readonly JobRef[], since: number): Promise<OutcomeGroup[]> {
    if (jobs.length === 0) return [];
    const { rows } = await this.pool.query<OutcomeGroup>(
      `SELECT r.app, r.job, (r.scheduled_time / 3600000) * 3600000 AS hour,
         (r."trigger" IN ('schedule', 'catchup') OR (r."trigger" = 'host'
           AND r.outcome NOT IN ('skipped', 'duplicate'))) AS scheduled,
         r.outcome, COUNT(*)::int AS count
       FROM unnest($1::text[], $2::text[]) AS j(app, job)
       JOIN runs r ON r.app = j.app AND r.job = j.job AND r.scheduled_time >= $3
       WHERE r.outcome IS NOT NULL AND r.phase = 'ended'
       GROUP BY r.app, r.job, hour, scheduled, r.outcome`,
      [jobs.map((j) => j.app), jobs.map((j) => j.job), since],
    );
    return rows;
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

  /** Runs `work` in one transaction, after the fence check when fenced. */
  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (this.#revoked) throw new FencedError(`epoch ${this.fence?.epoch} was revoked`);
    const client = await this.#connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      if (this.fence) {
        // the check, and the epoch that stamps the rows this transaction writes (leader_epoch)
        const { rowCount } = await client.query(
          `SELECT set_config('cronix.epoch', epoch::text, true) FROM lease
           WHERE name = 'leader' AND holder = $1 AND epoch = $2 AND expires_at > now() FOR SHARE`,
          [this.fence.holder, this.fence.epoch],
        );
        if (rowCount !== 1) {
          const reason = `the lease is no longer held by ${this.fence.holder} at epoch ${this.fence.epoch}`;
          this.#refuse(reason);
          throw new FencedError(reason);
        }
      }
      const out = await work(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      if (err instanceof FencedError) throw err;
      if (err instanceof Error && 'code' in err && typeof err.code === 'string')
        throw Object.assign(new PgStoreError(explainPgError(err, this.target)), { cause: err });
      throw err;
    } finally {
      client.release(broken);
    }
  }
}
