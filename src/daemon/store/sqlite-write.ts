/**
 * The ledger ops of the SQLite store (`sqlite.ts`), each inside the caller's `BEGIN IMMEDIATE`
 * transaction: the fire claim and the run-key claim are checked and taken with no step between
 * (SQLite has one writer at a time).
 */
import { withSeq } from './record.js';
import { claimsInstant } from './claims.js';
import type { SqliteBackfills } from './sqlite-backfills.js';
import type { SqliteIdempotency } from './sqlite-idempotency.js';
import type { SqliteSkips } from './sqlite-skips.js';
import {
  endedRow,
  fromRow,
  insertParams,
  logText,
  toRun,
  type Prepared,
  type Row,
} from './sqlite-sql.js';
import type { EndPatch, LedgerOp, LedgerResult, NewRun, RunRecord } from './types.js';

/** Applies ledger ops with the store's prepared statements. */
export class SqliteWriter {
  constructor(
    private readonly stmts: () => Prepared,
    private readonly now: () => number,
    private readonly backfills: () => SqliteBackfills,
    private readonly idempotency: () => SqliteIdempotency,
    private readonly skips: () => SqliteSkips,
  ) {}

  /** A run by id, or null. */
  get(id: string): RunRecord | null {
    const row = this.stmts().getRun.get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Applies one op inside the caller's transaction. */
  apply(op: LedgerOp): LedgerResult {
    switch (op.kind) {
      case 'insert':
        return this.insert(op.run);
      case 'start':
        return this.start(op.id, op.startedAt);
      case 'end':
        return this.end(op.id, op.patch);
      case 'due':
        return this.stmts().dueRun.run(op.id).changes === 1 ? { kind: 'ok' } : { kind: 'gone' };
      case 'attempt':
        return this.stmts().attemptRun.run(op.attempt, op.id).changes === 1
          ? { kind: 'ok' }
          : { kind: 'gone' };
      case 'withdraw':
        return this.withdraw(op.id);
      case 'process':
        return this.stmts().setProcess.run(op.pid, op.startTime, op.id).changes === 1
          ? { kind: 'ok' }
          : { kind: 'gone' };
      case 'checkpoint':
        this.stmts().setCheckpoint.run(op.ref.app, op.ref.job, op.ref.scheduleIndex, op.at);
        return { kind: 'ok' };
      case 'backfill-create':
      case 'backfill-link':
      case 'backfill-end':
        return this.backfills().apply(op);
      case 'run-params':
        return this.stmts().setParams.run(JSON.stringify(op.params), op.id).changes === 1
          ? { kind: 'ok' }
          : { kind: 'gone' };
      case 'idempotency-key':
        return this.idempotency().apply(op);
      case 'skip-done':
        return this.skips().apply(op);
    }
  }

  /** Claims `runKey` for `runId`; null when claimed, else why it is held. */
  private claimKey(runKey: string, runId: string, now: number): string | null {
    const s = this.stmts();
    if (s.claimKey.run(runKey, runId, now).changes === 1) return null;
    const holder = s.keyHolder.get(runKey) as { run_id: string; state: string };
    return holder.state === 'succeeded'
      ? `run key already succeeded in run ${holder.run_id}`
      : `run key is being run by run ${holder.run_id}`;
  }

  private insert(run: NewRun): LedgerResult {
    const s = this.stmts();
    if (claimsInstant(run)) {
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
    if (run.phase === 'planned' || run.phase === 'running') {
      const at = run.startedAt ?? run.createdAt;
      const held = this.claimKey(run.runKey, run.id, at);
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
    const seq = Number(s.insertRun.run(insertParams(row)).lastInsertRowid);
    return { kind: 'recorded', run: withSeq(row, seq) };
  }

  private withdraw(id: string): LedgerResult {
    const s = this.stmts();
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

  private start(id: string, startedAt: number): LedgerResult {
    const s = this.stmts();
    const run = this.get(id);
    if (!run || run.phase !== 'queued') return { kind: 'gone' };
    const held = this.claimKey(run.runKey, id, startedAt);
    if (held !== null) {
      const patch: EndPatch = { outcome: 'duplicate', endedAt: startedAt, error: held };
      const row = endedRow(s.endRun.get(this.endParams(id, patch)) as unknown[]);
      return { kind: 'duplicate', run: fromRow(row) };
    }
    s.startRun.run(startedAt, id);
    return { kind: 'started', run: { ...run, phase: 'planned', startedAt, dueAt: null } };
  }

  private end(id: string, patch: EndPatch): LedgerResult {
    const s = this.stmts();
    const values = s.endRun.get(this.endParams(id, patch)) as unknown[] | undefined;
    if (!values) return { kind: 'gone' };
    const row = endedRow(values);
    if (patch.outcome === 'success') s.succeedKey.run(row.runKey, id, patch.endedAt ?? this.now());
    else s.releaseKey.run(row.runKey, id);
    // the log just written is the patch's: not parsed back from its text
    return { kind: 'ended', run: patch.attemptLog ? toRun(row, patch.attemptLog) : fromRow(row) };
  }

  /** Parameters of `endRun`, in its order: fields the patch leaves out keep their stored value. */
  private endParams(id: string, patch: EndPatch): unknown[] {
    return [
      patch.outcome,
      patch.endedAt,
      patch.error,
      patch.attempts ?? null,
      patch.lastStatus === undefined ? 0 : 1,
      patch.lastStatus ?? null,
      patch.attemptLog === undefined ? 0 : 1,
      patch.attemptLog === undefined ? null : logText(patch.attemptLog),
      patch.outputTruncated === undefined ? null : patch.outputTruncated ? 1 : 0,
      patch.outputLost ?? null,
      id,
      patch.attemptLog === undefined ? 0 : 1,
    ];
  }
}
