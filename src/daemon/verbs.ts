/**
 * The verbs of the API (SPEC §7): trigger now, at an instant or after a
 * delay; cancel; replay; pause and resume. Each goes through the same lanes
 * and pipeline as scheduled fires. Cancel decides on the in-memory state with
 * no `await` between the look and the take, so a run being started is either
 * never started or aborted, and its final row says `stopped` (SPEC §9 item 6).
 */
import { echo } from '../contract/echo.js';
import { uuidv7 } from '../fire/ids.js';
import { SchedulerError, type SchedulerCore, type TriggerResult } from './core.js';
import type { Lane } from './lane.js';
import { jobKey } from './registry.js';
import type { NewRun, RunRecord } from './store/types.js';

function laneOf(core: SchedulerCore, app: string, job: string): Lane {
  const lane = core.lanes.get(jobKey(app, job));
  if (!lane || lane.removed)
    throw new SchedulerError('not_found', `no job ${echo(`${app}/${job}`)}`);
  return lane;
}

function refuseWhenStopping(core: SchedulerCore): void {
  if (core.isStopping)
    throw new SchedulerError(
      'unavailable',
      'the daemon is shutting down; try again after it restarts',
    );
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

/** A manual trigger now, at an instant, or after a delay; same admission as scheduled fires. */
export async function trigger(
  core: SchedulerCore,
  app: string,
  jobName: string,
  when: { at?: number; afterSeconds?: number } = {},
): Promise<TriggerResult> {
  const lane = laneOf(core, app, jobName);
  refuseWhenStopping(core);
  const now = core.deps.clock.now();
  const at =
    when.at ?? (when.afterSeconds !== undefined ? now + when.afterSeconds * 1000 : undefined);
  if (at !== undefined && at > now) {
    const run = manualRun(core, lane, at, { dueAt: at });
    core.addDelayed(run);
    const [res] = await core.ledger.submit([{ kind: 'insert', run }]);
    if (res?.kind !== 'recorded') throw new Error(`delayed run ${run.id} was not recorded`);
    core.events.emit('run-recorded', res.run);
    return { run: res.run, admission: 'scheduled' };
  }
  const [res] = await core.record([core.plan(lane, manualRun(core, lane, now))]);
  if (!res) throw new Error('a manual run has no fire claim to collide with');
  return res;
}

/** Cancels a queued, delayed, starting or running run; its row ends `stopped`. */
export async function cancel(core: SchedulerCore, runId: string): Promise<RunRecord> {
  const { store } = core.deps;
  const row = await store.getRun(runId);
  if (!row) throw new SchedulerError('not_found', `no run ${echo(runId)}`);
  const lane = core.lanes.get(jobKey(row.app, row.job));
  // from here to the decision: no await
  const wasDelayed = core.delayed.delete(runId);
  if (wasDelayed || lane?.unqueue(runId)) {
    if (lane) core.gauges(lane);
    const ended = await core.endUnstarted(row, 'cancelled');
    if (ended) return ended;
  } else {
    const slot = lane?.slot(runId);
    if (slot && lane) {
      lane.stop(runId, 'cancelled'); // a no-op when a Replace is already stopping it
      await slot.done;
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
  const lane = core.lanes.get(jobKey(row.app, row.job));
  if (!lane || lane.removed)
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
  };
  const [res] = await core.record([core.plan(lane, run)]);
  if (!res) throw new Error('a replay has no fire claim to collide with');
  return res;
}

/** Pauses or resumes the scheduled fires of a job (manual triggers still work). */
export async function setPaused(
  core: SchedulerCore,
  app: string,
  jobName: string,
  paused: boolean,
): Promise<void> {
  const lane = laneOf(core, app, jobName);
  await core.deps.store.setPaused(app, jobName, paused);
  lane.paused = paused;
  core.events.emit('job-paused', { app, job: jobName, paused });
}
