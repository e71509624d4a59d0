/**
 * The steps of one {@link Store.write} on PostgreSQL, inside the caller's
 * transaction. Consecutive steps of one kind run as ONE set-based statement
 * (arrays through `unnest`), so 10,000 fires of a tick cost a few round trips,
 * not 30,000. Within a statement the claims behave as on SQLite: the fire claim
 * and the run-key claim are `INSERT … ON CONFLICT DO NOTHING`, first in input
 * order wins, and a run whose key is held is recorded `duplicate` with the
 * holder named.
 */
import type pg from 'pg';
import { withSeq } from '../record.js';
import { applyBackfillOp } from './backfills.js';
import { applyIdempotencyOp } from './idempotency.js';
import { applySkipDonePg } from './skips.js';
import type {
  RunParams,
  AttemptLogEntry,
  EndPatch,
  LedgerOp,
  LedgerResult,
  NewRun,
  RunRecord,
} from '../types.js';

/**
 * The epoch of the transaction's term (set by the fenced store with its fence
 * check; null unfenced): `runs.leader_epoch` of what it writes. Inserts get it
 * from the column's default; every update below sets it.
 */
export const WRITER_EPOCH = `NULLIF(current_setting('cronix.epoch', true), '')::bigint`;

/** Columns of a run as `RunRecord` fields. */
export const PG_RUN_COLUMNS = `seq, id, run_key AS "runKey", app, job, schedule_index AS "scheduleIndex",
  scheduled_time AS "scheduledTime", "trigger", phase, outcome, attempts,
  last_status AS "lastStatus", created_at AS "createdAt", started_at AS "startedAt",
  ended_at AS "endedAt", due_at AS "dueAt", error, attempt_log AS "attemptLog",
  output_truncated AS "outputTruncated", output_lost AS "outputLost", host,
  exit_code AS "exitCode", clock_skew_ms AS "clockSkewMs", lateness_ms AS "latenessMs",
  fencing_token AS "fencingToken", params`;

/** A row as node-postgres returns it (JSONB parsed, BIGINT as number). */
type PgRow = Omit<RunRecord, 'attemptLog' | 'params'> & {
  attemptLog: AttemptLogEntry[] | null;
  params?: string | null;
};

/** A fetched row as a {@link RunRecord}. */
export const fromPgRow = ({ params, ...row }: PgRow): RunRecord => ({
  ...row,
  attemptLog: row.attemptLog ?? [],
  ...(params ? { params: JSON.parse(params) as RunParams } : {}),
});

const logText = (log: readonly AttemptLogEntry[]): string | null =>
  log.length === 0 ? null : JSON.stringify(log);

const INSERT_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[],
    $7::text[], $8::text[], $9::text[], $10::int[], $11::int[], $12::bigint[], $13::bigint[],
    $14::bigint[], $15::bigint[], $16::text[], $17::text[], $18::boolean[], $19::text[])
  WITH ORDINALITY AS t(id, run_key, app, job, schedule_index, scheduled_time, trig, phase,
    outcome, attempts, last_status, created_at, started_at, ended_at, due_at, error, attempt_log,
    output_truncated, output_lost, ord)
),
fire_claimed AS (
  INSERT INTO fires (app, job, schedule_index, scheduled_time, run_id)
  SELECT app, job, schedule_index, scheduled_time, id FROM input
  WHERE trig IN ('schedule', 'catchup', 'host') AND schedule_index IS NOT NULL
  ORDER BY ord
  ON CONFLICT DO NOTHING
  RETURNING run_id
),
accepted AS (
  SELECT i.* FROM input i
  WHERE NOT (i.trig IN ('schedule', 'catchup', 'host') AND i.schedule_index IS NOT NULL)
     OR i.id IN (SELECT run_id FROM fire_claimed)
),
key_claimed AS (
  INSERT INTO run_keys (run_key, run_id, state, updated_at)
  SELECT run_key, id, 'running', COALESCE(started_at, created_at) FROM accepted
  WHERE phase IN ('planned', 'running')
  ORDER BY ord
  ON CONFLICT DO NOTHING
  RETURNING run_key, run_id
),
decided AS (
  SELECT a.*,
    CASE WHEN a.phase IN ('planned', 'running') AND kc.run_id IS NULL THEN COALESCE(
      (SELECT CASE WHEN rk.state = 'succeeded' THEN 'run key already succeeded in run ' || rk.run_id
                   ELSE 'run key is being run by run ' || rk.run_id END
         FROM run_keys rk WHERE rk.run_key = a.run_key),
      (SELECT 'run key is being run by run ' || k2.run_id FROM key_claimed k2
         WHERE k2.run_key = a.run_key LIMIT 1),
      'run key is held')
    END AS held
  FROM accepted a LEFT JOIN key_claimed kc ON kc.run_id = a.id
)
INSERT INTO runs (id, run_key, app, job, schedule_index, scheduled_time, "trigger", phase,
  outcome, attempts, last_status, created_at, started_at, ended_at, due_at, error, attempt_log,
  output_truncated, output_lost)
SELECT id, run_key, app, job, schedule_index, scheduled_time, trig,
  CASE WHEN held IS NULL THEN phase ELSE 'ended' END,
  CASE WHEN held IS NULL THEN outcome ELSE 'duplicate' END,
  attempts, last_status, created_at,
  CASE WHEN held IS NULL THEN started_at END,
  CASE WHEN held IS NULL THEN ended_at ELSE COALESCE(started_at, created_at) END,
  due_at, COALESCE(held, error), attempt_log::jsonb, output_truncated, output_lost
FROM decided ORDER BY ord
RETURNING seq, id, phase, outcome, started_at AS "startedAt", ended_at AS "endedAt", error`;

const SUCCEED_KEYS_SQL = `
INSERT INTO run_keys (run_key, run_id, state, updated_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
ON CONFLICT (run_key) DO UPDATE
SET run_id = EXCLUDED.run_id, state = 'succeeded', updated_at = EXCLUDED.updated_at`;

const END_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::int[],
    $7::int[], $8::int[], $9::text[], $10::boolean[], $11::text[])
  AS t(id, outcome, ended_at, error, attempts, has_status, last_status, has_log, attempt_log,
    output_truncated, output_lost)
),
ended AS (
  UPDATE runs r SET phase = 'ended', outcome = i.outcome, ended_at = i.ended_at, error = i.error,
    leader_epoch = ${WRITER_EPOCH},
    attempts = COALESCE(i.attempts, r.attempts),
    last_status = CASE WHEN i.has_status = 1 THEN i.last_status ELSE r.last_status END,
    attempt_log = CASE WHEN i.has_log = 1 THEN i.attempt_log::jsonb ELSE r.attempt_log END,
    output_truncated = COALESCE(i.output_truncated, r.output_truncated),
    output_lost = COALESCE(i.output_lost, r.output_lost)
  FROM input i WHERE r.id = i.id AND r.phase <> 'ended'
  RETURNING r.*
),
succeeded AS (
  INSERT INTO run_keys (run_key, run_id, state, updated_at)
  SELECT run_key, id, 'succeeded', ended_at FROM ended WHERE outcome = 'success'
  ON CONFLICT (run_key) DO UPDATE
  SET run_id = EXCLUDED.run_id, state = 'succeeded', updated_at = EXCLUDED.updated_at
  RETURNING 1
),
released AS (
  DELETE FROM run_keys k USING ended e
  WHERE e.outcome <> 'success' AND k.run_key = e.run_key AND k.run_id = e.id AND k.state = 'running'
  RETURNING 1
)
SELECT seq, id, run_key AS "runKey", app, job, schedule_index AS "scheduleIndex",
  scheduled_time AS "scheduledTime", "trigger", phase, outcome, attempts,
  last_status AS "lastStatus", created_at AS "createdAt", started_at AS "startedAt",
  ended_at AS "endedAt", due_at AS "dueAt", error, attempt_log AS "attemptLog",
  output_truncated AS "outputTruncated", output_lost AS "outputLost", host,
  exit_code AS "exitCode", clock_skew_ms AS "clockSkewMs", lateness_ms AS "latenessMs",
  fencing_token AS "fencingToken"
FROM ended`;

const CHECKPOINT_SQL = `
INSERT INTO checkpoints (app, job, schedule_index, at)
SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[])
ON CONFLICT (app, job, schedule_index) DO UPDATE SET at = GREATEST(checkpoints.at, EXCLUDED.at)`;

type Kind = LedgerOp['kind'];
type Of<K extends Kind> = Extract<LedgerOp, { kind: K }>;

/** Applies `ops` in order with `client` (already in a transaction); one result per op. */
export async function applyOps(
  client: pg.PoolClient,
  ops: readonly LedgerOp[],
): Promise<LedgerResult[]> {
  const results: LedgerResult[] = [];
  for (let i = 0; i < ops.length;) {
    const kind = ops[i]!.kind;
    let j = i;
    while (j < ops.length && ops[j]!.kind === kind) j++;
    const segment = ops.slice(i, j);
    switch (kind) {
      case 'insert':
        results.push(...(await inserts(client, segment as Of<'insert'>[])));
        break;
      case 'end':
        results.push(...(await ends(client, segment as Of<'end'>[])));
        break;
      case 'start':
        for (const op of segment as Of<'start'>[]) results.push(await start(client, op));
        break;
      case 'due': {
        const ids = (segment as Of<'due'>[]).map((o) => o.id);
        const { rows } = await client.query<{ id: string }>(
          `UPDATE runs SET due_at = NULL, leader_epoch = ${WRITER_EPOCH}
           WHERE id = ANY($1::text[]) AND phase = 'queued' RETURNING id`,
          [ids],
        );
        const done = new Set(rows.map((r) => r.id));
        for (const id of ids) results.push(done.has(id) ? { kind: 'ok' } : { kind: 'gone' });
        break;
      }
      case 'attempt': {
        const list = segment as Of<'attempt'>[];
        // one row per run (an UPDATE … FROM touches a row once), its latest attempt
        const latest = new Map<string, number>();
        for (const o of list) latest.set(o.id, Math.max(o.attempt, latest.get(o.id) ?? 0));
        const { rows } = await client.query<{ id: string }>(
          `UPDATE runs r SET phase = 'running', attempts = GREATEST(r.attempts, i.attempt),
             leader_epoch = ${WRITER_EPOCH}
           FROM unnest($1::text[], $2::int[]) AS i(id, attempt)
           WHERE r.id = i.id AND r.phase IN ('planned', 'running') RETURNING r.id`,
          [[...latest.keys()], [...latest.values()]],
        );
        const done = new Set(rows.map((r) => r.id));
        for (const o of list) results.push(done.has(o.id) ? { kind: 'ok' } : { kind: 'gone' });
        break;
      }
      case 'process':
        for (const op of segment as Of<'process'>[]) {
          const r = await client.query(
            `UPDATE runs SET pid = $1, pid_start = $2, leader_epoch = ${WRITER_EPOCH}
             WHERE id = $3 AND phase IN ('planned', 'running')`,
            [op.pid, op.startTime, op.id],
          );
          results.push(r.rowCount === 1 ? { kind: 'ok' } : { kind: 'gone' });
        }
        break;
      case 'withdraw':
        for (const op of segment as Of<'withdraw'>[]) results.push(await withdraw(client, op.id));
        break;
      case 'checkpoint':
        await checkpoints(client, segment as Of<'checkpoint'>[]);
        for (let k = 0; k < segment.length; k++) results.push({ kind: 'ok' });
        break;
      case 'backfill-create':
      case 'backfill-link':
      case 'backfill-end':
        for (const op of segment as Of<'backfill-create' | 'backfill-link' | 'backfill-end'>[])
          results.push(await applyBackfillOp(client, op));
        break;
      case 'run-params':
        for (const op of segment as Of<'run-params'>[]) {
          const r = await client.query('UPDATE runs SET params = $1 WHERE id = $2', [
            JSON.stringify(op.params),
            op.id,
          ]);
          results.push(r.rowCount === 1 ? { kind: 'ok' } : { kind: 'gone' });
        }
        break;
      case 'idempotency-key':
        for (const op of segment as Of<'idempotency-key'>[])
          results.push(await applyIdempotencyOp(client, op));
        break;
      case 'skip-done':
        for (const op of segment as Of<'skip-done'>[])
          results.push(await applySkipDonePg(client, op));
        break;
    }
    i = j;
  }
  return results;
}

async function inserts(client: pg.PoolClient, ops: Of<'insert'>[]): Promise<LedgerResult[]> {
  const runs = ops.map((o) => o.run);
  const col = <T>(f: (r: NewRun) => T): T[] => runs.map(f);
  const { rows } = await client.query<
    Pick<RunRecord, 'seq' | 'id' | 'phase' | 'outcome' | 'startedAt' | 'endedAt' | 'error'>
  >(INSERT_SQL, [
    col((r) => r.id),
    col((r) => r.runKey),
    col((r) => r.app),
    col((r) => r.job),
    col((r) => r.scheduleIndex),
    col((r) => r.scheduledTime),
    col((r) => r.trigger),
    col((r) => r.phase),
    col((r) => r.outcome),
    col((r) => r.attempts),
    col((r) => r.lastStatus),
    col((r) => r.createdAt),
    col((r) => r.startedAt),
    col((r) => r.endedAt),
    col((r) => r.dueAt),
    col((r) => r.error),
    col((r) => logText(r.attemptLog)),
    col((r) => r.outputTruncated),
    col((r) => r.outputLost),
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const succeeded = runs.filter((r) => r.phase === 'ended' && r.outcome === 'success');
  if (succeeded.length > 0)
    await client.query(SUCCEED_KEYS_SQL, [
      succeeded.map((r) => r.runKey),
      succeeded.map((r) => r.id),
      succeeded.map(() => 'succeeded'),
      succeeded.map((r) => r.endedAt ?? r.createdAt),
    ]);
  return runs.map((run): LedgerResult => {
    const row = byId.get(run.id);
    if (!row) return { kind: 'fire-exists' };
    return {
      kind: 'recorded',
      run: {
        ...withSeq(run, row.seq), // a spread over a record's own fields keeps its map
        phase: row.phase,
        outcome: row.outcome,
        startedAt: row.startedAt,
        endedAt: row.endedAt,
        error: row.error,
      },
    };
  });
}

async function ends(client: pg.PoolClient, ops: Of<'end'>[]): Promise<LedgerResult[]> {
  const p = ops.map((o) => o.patch);
  const col = <T>(f: (x: EndPatch) => T): T[] => p.map(f);
  const { rows } = await client.query<PgRow>(END_SQL, [
    ops.map((o) => o.id),
    col((x) => x.outcome),
    col((x) => x.endedAt),
    col((x) => x.error),
    col((x) => x.attempts ?? null),
    col((x) => (x.lastStatus === undefined ? 0 : 1)),
    col((x) => x.lastStatus ?? null),
    col((x) => (x.attemptLog === undefined ? 0 : 1)),
    col((x) => (x.attemptLog === undefined ? null : logText(x.attemptLog))),
    col((x) => x.outputTruncated ?? null),
    col((x) => x.outputLost ?? null),
  ]);
  const byId = new Map(rows.map((r) => [r.id, fromPgRow(r)]));
  return ops.map((o): LedgerResult => {
    const run = byId.get(o.id);
    return run ? { kind: 'ended', run } : { kind: 'gone' };
  });
}

async function start(client: pg.PoolClient, op: Of<'start'>): Promise<LedgerResult> {
  const { rows } = await client.query<{ runKey: string; phase: string }>(
    `SELECT run_key AS "runKey", phase FROM runs WHERE id = $1 FOR UPDATE`,
    [op.id],
  );
  const row = rows[0];
  if (!row || row.phase !== 'queued') return { kind: 'gone' };
  const claimed = await client.query(
    `INSERT INTO run_keys (run_key, run_id, state, updated_at) VALUES ($1, $2, 'running', $3)
     ON CONFLICT DO NOTHING`,
    [row.runKey, op.id, op.startedAt],
  );
  if (claimed.rowCount === 1) {
    const { rows: started } = await client.query<PgRow>(
      `UPDATE runs SET phase = 'planned', started_at = $2, due_at = NULL,
         leader_epoch = ${WRITER_EPOCH} WHERE id = $1 RETURNING ${PG_RUN_COLUMNS}`,
      [op.id, op.startedAt],
    );
    return { kind: 'started', run: fromPgRow(started[0]!) };
  }
  const { rows: holder } = await client.query<{ runId: string; state: string }>(
    `SELECT run_id AS "runId", state FROM run_keys WHERE run_key = $1`,
    [row.runKey],
  );
  const h = holder[0];
  const held = !h
    ? 'run key is held'
    : h.state === 'succeeded'
      ? `run key already succeeded in run ${h.runId}`
      : `run key is being run by run ${h.runId}`;
  const [ended] = await ends(client, [
    { kind: 'end', id: op.id, patch: { outcome: 'duplicate', endedAt: op.startedAt, error: held } },
  ]);
  return { kind: 'duplicate', run: (ended as { run: RunRecord }).run };
}

async function withdraw(client: pg.PoolClient, id: string): Promise<LedgerResult> {
  const { rows } = await client.query<{ runKey: string }>(
    `WITH gone AS (
       DELETE FROM runs WHERE id = $1 AND phase IN ('planned', 'running') AND attempts = 0
       RETURNING run_key, app, job, schedule_index, scheduled_time),
     fire AS (
       DELETE FROM fires f USING gone g WHERE f.app = g.app AND f.job = g.job
       AND f.schedule_index = g.schedule_index AND f.scheduled_time = g.scheduled_time AND f.run_id = $1
       RETURNING 1),
     key AS (
       DELETE FROM run_keys k USING gone g WHERE k.run_key = g.run_key AND k.run_id = $1
       AND k.state = 'running' RETURNING 1)
     SELECT run_key AS "runKey" FROM gone`,
    [id],
  );
  return rows.length === 1 ? { kind: 'ok' } : { kind: 'gone' };
}

async function checkpoints(client: pg.PoolClient, ops: Of<'checkpoint'>[]): Promise<void> {
  // one row per schedule (an upsert may not touch a row twice), the latest instant
  const latest = new Map<string, Of<'checkpoint'>>();
  for (const op of ops) {
    const k = `${op.ref.app}\u0000${op.ref.job}\u0000${op.ref.scheduleIndex}`;
    const prev = latest.get(k);
    if (!prev || op.at > prev.at) latest.set(k, op);
  }
  const list = [...latest.values()];
  await client.query(CHECKPOINT_SQL, [
    list.map((o) => o.ref.app),
    list.map((o) => o.ref.job),
    list.map((o) => o.ref.scheduleIndex),
    list.map((o) => o.at),
  ]);
}
