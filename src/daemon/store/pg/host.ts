/**
 * Host-mode runs in the PostgreSQL store (SPEC §15, see `../host-types.ts`). Reports are
 * recorded one by one in the caller's transaction: the fire claim is an insert-if-absent, a
 * `missed` row is taken over under the fire row's lock, a run id is inserted once
 * (`ON CONFLICT (id) DO NOTHING`), so two replicas recording the same report, or a report and
 * the leader's `missed` row of its instant, settle on one row.
 */
import type pg from 'pg';
import { claimsFire, reportEnd, reportRow } from '../host-rows.js';
import {
  NO_END_REPORT,
  type LastReport,
  type ReportResult,
  type ReportWrite,
} from '../host-types.js';
import { RUN_INSERT_COLUMNS, runInsertValues, withSeq } from '../record.js';
import type { JobRef, RunRecord } from '../types.js';
import { fromPgRow, PG_RUN_COLUMNS } from './write.js';

type PgRow = Parameters<typeof fromPgRow>[0];

const END_SQL = `
UPDATE runs SET phase = 'ended', outcome = $2, ended_at = $3, error = $4,
  attempts = GREATEST(attempts, $5), last_status = COALESCE($6, last_status),
  attempt_log = COALESCE($7::jsonb, attempt_log), exit_code = $8, output_truncated = $9
WHERE id = $1 AND (phase <> 'ended'
  OR (outcome = 'crashed' AND error = '${NO_END_REPORT}' AND "trigger" = 'host'))
RETURNING ${PG_RUN_COLUMNS}`;

const INSERT_SQL = `
INSERT INTO runs (${RUN_INSERT_COLUMNS})
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17::jsonb, $18,
  $19, $20, $21, $22, $23, $24)
ON CONFLICT (id) DO NOTHING
RETURNING seq`;

async function getRun(client: pg.PoolClient, id: string): Promise<RunRecord | null> {
  const { rows } = await client.query<PgRow>(`SELECT ${PG_RUN_COLUMNS} FROM runs WHERE id = $1`, [
    id,
  ]);
  return rows[0] ? fromPgRow(rows[0]) : null;
}

async function saveOutput(client: pg.PoolClient, w: ReportWrite): Promise<void> {
  const out = w.report.run.output;
  if (out === null || out === '') return;
  await client.query(
    `INSERT INTO run_outputs (run_id, output, created_at) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING`,
    [w.report.run.id, out, w.receivedAt],
  );
}

async function recordOne(client: pg.PoolClient, w: ReportWrite): Promise<ReportResult> {
  const r = w.report.run;
  const existing = await getRun(client, r.id);
  if (existing) {
    if (w.report.kind === 'ended') {
      const e = reportEnd(w);
      const { rows } = await client.query<PgRow>(END_SQL, [
        r.id,
        e.outcome,
        e.endedAt,
        e.error,
        e.attempts,
        e.lastStatus,
        e.attemptLog,
        e.exitCode,
        e.outputTruncated === 1,
      ]);
      if (rows[0]) {
        await saveOutput(client, w);
        return { kind: 'ended', run: fromPgRow(rows[0]) };
      }
    }
    return { kind: 'unchanged', run: existing };
  }
  let replaced: string | null = null;
  if (claimsFire(w)) {
    const key = [r.app, r.job, r.scheduleIndex, r.scheduledTime];
    const claimed = await client.query(
      `INSERT INTO fires (app, job, schedule_index, scheduled_time, run_id)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [...key, r.id],
    );
    if (claimed.rowCount === 0) {
      // the holder, locked: a concurrent take-over of the same missed row waits for this one
      const { rows } = await client.query<{ runId: string; outcome: string | null }>(
        `SELECT f.run_id AS "runId", r.outcome FROM fires f LEFT JOIN runs r ON r.id = f.run_id
         WHERE f.app = $1 AND f.job = $2 AND f.schedule_index = $3 AND f.scheduled_time = $4
         FOR UPDATE OF f`,
        key,
      );
      const holder = rows[0];
      if (holder && holder.outcome === 'missed') {
        await client.query(`DELETE FROM runs WHERE id = $1 AND outcome = 'missed'`, [holder.runId]);
        await client.query(
          `UPDATE fires SET run_id = $5 WHERE app = $1 AND job = $2 AND schedule_index = $3
           AND scheduled_time = $4`,
          [...key, r.id],
        );
        replaced = holder.runId;
      }
    }
  }
  const row = reportRow(w);
  const { rows } = await client.query<{ seq: number }>(INSERT_SQL, runInsertValues(row));
  if (!rows[0]) {
    // the same report recorded at once by another replica
    const run = await getRun(client, r.id);
    if (run) return { kind: 'unchanged', run };
    throw new Error(`run ${r.id}: neither recorded nor found`);
  }
  await saveOutput(client, w);
  return { kind: 'recorded', run: withSeq(row, rows[0].seq), replaced };
}

/** Records the reports in order with `client` (already in a transaction). */
export async function recordPg(
  client: pg.PoolClient,
  writes: readonly ReportWrite[],
): Promise<ReportResult[]> {
  const out: ReportResult[] = [];
  for (const w of writes) out.push(await recordOne(client, w));
  return out;
}

/** Host runs started and not ended, oldest first. */
export async function openPg(pool: pg.Pool): Promise<RunRecord[]> {
  const { rows } = await pool.query<PgRow>(
    `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE phase = 'running' AND "trigger" = 'host'
     ORDER BY seq`,
  );
  return rows.map(fromPgRow);
}

/** Each job's newest run with a host, through its `(app, job, seq)` index. */
export async function lastPg(pool: pg.Pool, jobs: readonly JobRef[]): Promise<LastReport[]> {
  if (jobs.length === 0) return [];
  const { rows } = await pool.query<LastReport>(
    `SELECT j.app, j.job, r.id AS "runId", r.host, r.created_at AS at
     FROM unnest($1::text[], $2::text[]) AS j(app, job)
     CROSS JOIN LATERAL (
       SELECT id, host, created_at FROM runs
       WHERE app = j.app AND job = j.job AND host IS NOT NULL ORDER BY seq DESC LIMIT 1) r`,
    [jobs.map((j) => j.app), jobs.map((j) => j.job)],
  );
  return rows;
}

/** The output tail a report carried, or null. */
export async function outputPg(pool: pg.Pool, runId: string): Promise<string | null> {
  const { rows } = await pool.query<{ output: string }>(
    `SELECT output FROM run_outputs WHERE run_id = $1`,
    [runId],
  );
  return rows[0]?.output ?? null;
}
