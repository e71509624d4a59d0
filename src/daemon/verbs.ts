/**
 * The verbs of the API (SPEC §7): trigger now, at an instant or after a
 * delay; cancel; replay; pause and resume. Each goes through the same lanes
 * and pipeline as scheduled fires. Cancel asks the lane with no `await`
 * between the look and the take, so a run being started is either never
 * started or aborted, and its final row says `stopped` (SPEC §9 item 6).
 */
import { echo } from '../contract/echo.js';
import { uuidv7 } from '../fire/ids.js';
import type { Lane } from './admission/lane.js';
import {
  SchedulerError,
  type SchedulerCore,
  type TriggerOptions,
  type TriggerResult,
} from './core.js';
import { IDEMPOTENCY_TTL_MS, type IdempotencyOp } from './store/idempotency-types.js';
import { jobKey } from './registry.js';
import { paramsProblem } from './run-params.js';
import type { LedgerOp, NewRun, RunRecord } from './store/types.js';
import type { AdmissionName, Ticket } from './admission/types.js';
import { rfc3339Utc } from '../contract/run.js';
import { nextFire } from '../contract/schedule/index.js';
import { nextFireOf } from './schedules.js';
import type { SkipRecord } from './store/skip-types.js';

/** When a manual run is due: now (empty), at an instant, or after a delay. */
export interface When {
  at?: number;
  afterSeconds?: number;
}

function laneOf(core: SchedulerCore, app: string, job: string): Lane {
  const lane = core.lane(jobKey(app, job));
  if (!lane) throw new SchedulerError('not_found', `no job ${echo(`${app}/${job}`)}`);
  return lane;
}

function refuseWhenStopping(core: SchedulerCore): void {
  if (core.isStopping)
    throw new SchedulerError(
      'unavailable',
      'the daemon is shutting down; try again after it restarts',
    );
}

/** Records one decided run now (with `extra` ops in its ledger group) and returns how it was admitted. */
async function admitNow(
  core: SchedulerCore,
  lane: Lane,
  run: NewRun,
  extra: (admission: AdmissionName) => LedgerOp[] = () => [],
): Promise<TriggerResult> {
  const ticket = lane.admit(run, core.deps.clock.now());
  const [res] = await core.pipeline.record([{ lane, ticket }], extra(admissionOf(ticket.decision)));
  if (!res) throw new Error('a manual run has no fire claim to collide with');
  return res;
}

/**
 * A manual run for `at`. Its run key is the SPEC §5 key of that instant with
 * `#manual` appended: manual triggers for one instant (two delayed triggers
 * with the same `at`, or two in the same millisecond) are one logical run,
 * and a manual run never shares a key with the scheduled fire of that instant.
 */
function manualRun(
  core: SchedulerCore,
  lane: Lane,
  at: number,
  extra: Partial<NewRun> = {},
): NewRun {
  const run = core.newRun(lane.job, null, at, 'manual', extra);
  return { ...run, runKey: `${run.runKey}#manual` };
}

/** How a decision is answered (`pipeline.ts` says `skipped` for a duplicate too). */
function admissionOf(decision: Ticket['decision']): AdmissionName {
  if (decision === 'start' || decision === 'replace') return 'started';
  if (decision === 'queue') return 'queued';
  return decision === 'queue_full' ? 'queue_full' : 'skipped';
}

/** A manual trigger now, at an instant, or after a delay; same admission as scheduled fires. */
export async function trigger(
  core: SchedulerCore,
  app: string,
  jobName: string,
  when: When = {},
  opts: TriggerOptions = {},
): Promise<TriggerResult> {
  const lane = laneOf(core, app, jobName);
  refuseWhenStopping(core);
  const params = opts.params;
  const problem = params ? paramsProblem(lane.job, params) : null;
  if (problem !== null) throw new SchedulerError('invalid_request', problem);
  const now = core.deps.clock.now();
  const key = opts.idempotencyKey;
  const paramsOp = (id: string): LedgerOp[] => (params ? [{ kind: 'run-params', id, params }] : []);
  const keyOp = (runId: string, admission: AdmissionName): IdempotencyOp[] =>
    key === undefined
      ? []
      : [
          {
            kind: 'idempotency-key',
            app,
            job: jobName,
            key,
            runId,
            admission,
            at: now,
            ttlMs: IDEMPOTENCY_TTL_MS,
          },
        ];
  const at =
    when.at ?? (when.afterSeconds !== undefined ? now + when.afterSeconds * 1000 : undefined);
  if (at !== undefined && at > now) {
    const run = manualRun(core, lane, at, { dueAt: at, ...(params ? { params } : {}) });
    core.addDelayed(run);
    const [res] = await core.ledger.submit([
      { kind: 'insert', run },
      ...paramsOp(run.id),
      ...keyOp(run.id, 'scheduled'),
    ]);
    if (res?.kind !== 'recorded') throw new Error(`delayed run ${run.id} was not recorded`);
    core.events.emit('run-recorded', res.run);
    return { run: res.run, admission: 'scheduled' };
  }
  const run = manualRun(core, lane, now, params ? { params } : {});
  return admitNow(core, lane, run, (admission) => [
    ...paramsOp(run.id),
    ...keyOp(run.id, admission),
  ]);
}

/** Cancels a queued, delayed, starting or running run; its row ends `stopped`. */
export async function cancel(core: SchedulerCore, runId: string): Promise<RunRecord> {
  const { store } = core.deps;
  const row = await store.getRun(runId);
  if (!row) throw new SchedulerError('not_found', `no run ${echo(runId)}`);
  const lane = core.lane(jobKey(row.app, row.job)) ?? null;
  // from here to the decision: no await
  const delayed = core.takeDelayed(runId);
  if (delayed) {
    const ended = await core.pipeline.endUnstarted(lane, delayed, 'cancelled');
    if (ended) return ended;
  } else if (lane) {
    const c = lane.cancel(runId, 'cancelled');
    if (c.found === 'queued') {
      const ended = await core.pipeline.endUnstarted(lane, c.run, 'cancelled');
      if (ended) return ended;
    } else if (c.found === 'slot') {
      const released = core.pipeline.whenReleased(lane, runId);
      core.pipeline.apply(lane, c.effects);
      await released;
      return (await store.getRun(runId)) ?? row;
    }
  }
  const now = row.phase === 'ended' ? row : await store.getRun(runId);
  if (now?.phase === 'ended')
    throw new SchedulerError('conflict', `run ${runId} already ended (${now.outcome})`);
  throw new SchedulerError('conflict', `run ${runId} is not held by this daemon`);
}

/** A new run for an ended one: same run key, unless it succeeded (then a fresh one). */
export async function replay(core: SchedulerCore, runId: string): Promise<TriggerResult> {
  const row = await core.deps.store.getRun(runId);
  if (!row) throw new SchedulerError('not_found', `no run ${echo(runId)}`);
  if (row.phase !== 'ended') throw new SchedulerError('conflict', `run ${runId} has not ended`);
  const lane = core.lane(jobKey(row.app, row.job));
  if (!lane)
    throw new SchedulerError(
      'not_found',
      `job ${row.app}/${row.job} is no longer in the manifests`,
    );
  refuseWhenStopping(core);
  const now = core.deps.clock.now();
  const runKey =
    row.outcome === 'success' ? `${row.runKey}#replay-${uuidv7(now).slice(-12)}` : row.runKey;
  const run = {
    ...core.newRun(lane.job, row.scheduleIndex, row.scheduledTime, 'replay'),
    runKey,
    ...(row.params ? { params: row.params } : {}),
  };
  // a replay sends what the run it replays sent (its parameters too)
  const params = row.params;
  return admitNow(core, lane, run, () =>
    params ? [{ kind: 'run-params', id: run.id, params }] : [],
  );
}

/** Who paused a job and why (SPEC §16 "Pause takes the same note"). */
export interface PauseBy {
  reason: string | null;
  by: string;
}

/** Pauses or resumes the scheduled fires of a job (manual triggers still work). */
export async function setPaused(
  core: SchedulerCore,
  app: string,
  jobName: string,
  paused: boolean,
  by?: PauseBy,
): Promise<void> {
  const lane = laneOf(core, app, jobName);
  const note = by && paused ? { ...by, since: core.deps.clock.now() } : undefined;
  await core.deps.store.setPaused(app, jobName, paused, note);
  if (paused) core.pipeline.apply(lane, lane.pause(note ?? null));
  else {
    lane.paused = false;
    lane.pauseNote = null;
  }
  core.events.emit('job-paused', { app, job: jobName, paused });
}

/** What `skip` skips (SPEC §16 "Calendars"): the job's next fire, or one fire instant. */
export type SkipWhat = { next: true } | { at: number };

/** A skip as the verb answers it: `created` false when that instant was already skipped. */
export interface SkipResult {
  skip: SkipRecord;
  created: boolean;
}

/** Whether every schedule of the lane's job having instant `at` has processed it already. */
function decided(core: SchedulerCore, lane: Lane, at: number): boolean {
  const { job } = lane;
  const having = job.schedules
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => nextFire(s, job.job.timezone, at - 1) === at);
  return having.every(({ i }) => (core.schedules.last(lane, i) ?? -Infinity) >= at);
}

/**
 * Skips one fire instant of a job (`cronix skip`): when its fire comes — scheduled or caught up
 * — it is recorded `skipped` with reason `skip: by <who>`. Durable before it answers (a restart
 * keeps it); a fire of it already planned ahead ends `skipped` now. Asking again for the same
 * instant answers the first skip (`created` false), so a retried call skips one instant, not two.
 */
export async function skip(
  core: SchedulerCore,
  app: string,
  jobName: string,
  what: SkipWhat,
  by: string,
): Promise<SkipResult> {
  const lane = laneOf(core, app, jobName);
  refuseWhenStopping(core);
  const now = core.deps.clock.now();
  const { job } = lane;
  let at: number;
  if ('next' in what) {
    const next = nextFireOf(job, now);
    if (next === null)
      throw new SchedulerError('conflict', `${lane.key} has no next fire (it is disabled)`);
    at = next;
  } else {
    at = what.at;
    if (at <= now)
      throw new SchedulerError('invalid_request', `${rfc3339Utc(at)} is not in the future`);
    if (!job.schedules.some((s) => nextFire(s, job.job.timezone, at - 1) === at)) {
      const next = nextFireOf(job, now);
      throw new SchedulerError(
        'invalid_request',
        `${rfc3339Utc(at)} is not a fire of ${lane.key}` +
          (next === null ? '' : ` (its next fire is ${rfc3339Utc(next)})`),
      );
    }
  }
  // asked before (a retried call): the first skip, pending or already applied
  const existing = lane.calendar.skipOf(at);
  if (existing) return { skip: existing, created: false };
  const record: SkipRecord = { app, job: jobName, at, by, since: now };
  await core.deps.store.addSkip(record);
  const { effects, planned } = lane.addSkip(record);
  core.pipeline.apply(lane, effects);
  const done = { kind: 'skip-done' as const, app, job: jobName, at };
  if (planned) await core.ledger.submit([done]);
  else if (decided(core, lane, at)) {
    // its fire was decided while the skip was being written: too late, nothing is skipped
    lane.calendar.consume(at);
    await core.ledger.submit([done]);
    throw new SchedulerError(
      'conflict',
      `the fire of ${rfc3339Utc(at)} of ${lane.key} has already been decided; nothing was skipped`,
    );
  }
  core.events.emit('info', {
    msg: `${lane.key}: the fire of ${rfc3339Utc(at)} is skipped (by ${by})`,
  });
  return { skip: record, created: true };
}
