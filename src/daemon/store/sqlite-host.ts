/**
 * Host-mode runs in the SQLite store (SPEC §15, see `host-types.ts`): reports recorded in the
 * caller's transaction with the store's prepared statements, and the watcher's reads.
 */
import type Database from 'better-sqlite3';
import { claimsFire, reportEnd, reportRow } from './host-rows.js';
import {
  NO_END_REPORT,
  type LastReport,
  type ReportResult,
  type ReportWrite,
} from './host-types.js';
import {
  fromRow,
  insertParams,
  jobsJson,
  RUN_COLUMNS,
  type Prepared,
  type Row,
  type Stmt,
} from './sqlite-sql.js';
import { withSeq } from './record.js';
import type { JobRef, RunRecord } from './types.js';

/** See the module comment. */
export class SqliteHostRuns {
  readonly #fireHolder: Stmt;
  readonly #takeFire: Stmt;
  readonly #deleteMissed: Stmt;
  readonly #end: Stmt;
  readonly #output: Stmt;
  readonly #open: Stmt;
  readonly #last: Stmt;
  readonly #getOutput: Stmt;

  constructor(
    db: Database.Database,
    private readonly s: Prepared,
  ) {
    this.#fireHolder = db
      .prepare(
        `SELECT run_id FROM fires
         WHERE app = ? AND job = ? AND schedule_index = ? AND scheduled_time = ?`,
      )
      .pluck();
    this.#takeFire = db.prepare(
      `UPDATE fires SET run_id = ?
       WHERE app = ? AND job = ? AND schedule_index = ? AND scheduled_time = ? AND run_id = ?`,
    );
    this.#deleteMissed = db.prepare(`DELETE FROM runs WHERE id = ? AND outcome = 'missed'`);
    // the end of a started row, or a late end over the watcher's `no end report` crash
    this.#end = db.prepare(
      `UPDATE runs SET phase = 'ended', outcome = @outcome, ended_at = @endedAt, error = @error,
         attempts = MAX(attempts, @attempts), last_status = COALESCE(@lastStatus, last_status),
         attempt_log = COALESCE(@attemptLog, attempt_log), exit_code = @exitCode,
         output_truncated = @outputTruncated
       WHERE id = @id AND (phase <> 'ended'
         OR (outcome = 'crashed' AND error = '${NO_END_REPORT}' AND "trigger" = 'host'))
       RETURNING ${RUN_COLUMNS}`,
    );
    this.#output = db.prepare(
      `INSERT INTO run_outputs (run_id, output, created_at) VALUES (?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    this.#open = db.prepare(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE phase = 'running' AND "trigger" = 'host' ORDER BY seq`,
    );
    // each job's newest row with a host, through its (app, job, seq) index range backwards
    this.#last = db.prepare(
      `WITH j AS (SELECT json_extract(value, '$[0]') AS app, json_extract(value, '$[1]') AS job
                  FROM json_each(@jobs))
       SELECT j.app, j.job, r.id AS runId, r.host, r.created_at AS at
       FROM j JOIN runs r ON r.seq = (
         SELECT seq FROM runs WHERE app = j.app AND job = j.job AND host IS NOT NULL
         ORDER BY seq DESC LIMIT 1)`,
    );
    this.#getOutput = db.prepare(`SELECT output FROM run_outputs WHERE run_id = ?`).pluck();
  }

  /** Records one report inside the caller's transaction. */
  record(w: ReportWrite): ReportResult {
    const r = w.report.run;
    const existing = this.s.getRun.get(r.id) as Row | undefined;
    if (existing) {
      if (w.report.kind === 'ended') {
        const row = this.#end.get({ id: r.id, ...reportEnd(w) }) as Row | undefined;
        if (row) {
          this.#saveOutput(w);
          return { kind: 'ended', run: fromRow(row) };
        }
      }
      return { kind: 'unchanged', run: fromRow(existing) };
    }
    let replaced: string | null = null;
    if (claimsFire(w)) {
      const idx = r.scheduleIndex as number;
      if (this.s.claimFire.run(r.app, r.job, idx, r.scheduledTime, r.id).changes === 0) {
        const holder = this.#fireHolder.get(r.app, r.job, idx, r.scheduledTime) as string;
        // a spooled report of an instant recorded missed: the real run takes its place
        if (this.#deleteMissed.run(holder).changes === 1) {
          this.#takeFire.run(r.id, r.app, r.job, idx, r.scheduledTime, holder);
          replaced = holder;
        }
      }
    }
    const row = reportRow(w);
    const seq = Number(this.s.insertRun.run(insertParams(row)).lastInsertRowid);
    this.#saveOutput(w);
    return { kind: 'recorded', run: withSeq(row, seq), replaced };
  }

  #saveOutput(w: ReportWrite): void {
    const out = w.report.run.output;
    if (out !== null && out !== '') this.#output.run(w.report.run.id, out, w.receivedAt);
  }

  openHostRuns(): RunRecord[] {
    return (this.#open.all() as Row[]).map(fromRow);
  }

  lastReports(jobs: readonly JobRef[]): LastReport[] {
    if (jobs.length === 0) return [];
    return this.#last.all({ jobs: jobsJson(jobs) }) as LastReport[];
  }

  runOutput(runId: string): string | null {
    return (this.#getOutput.get(runId) as string | undefined) ?? null;
  }
}
