/**
 * Start-up recovery and catch-up (SPEC §7, §9 items 5 and 6).
 *
 * At start-up: runs left `running` by a crash end `crashed` (their run keys
 * released); queued runs come back in FIFO order, delayed ones wait for their
 * time, those of a job no longer in the manifests end `stopped`; then every
 * schedule catches up from its durable checkpoint.
 *
 * Catch-up is also what a late wake-up gets (a clock jump, a suspended VM): the
 * fires between the checkpoint and now go through `policy.catchup`, as
 * `catchup` runs or `missed` rows, never as a burst of `schedule` runs. Each
 * schedule's decision and the checkpoint it advances are one ledger group, so a
 * crash keeps both or neither.
 */
import type { Manifest } from '../contract/manifest/types.js';
import { rfc3339Utc } from '../contract/run.js';
import { nextFire } from '../contract/schedule/index.js';
import { recordedAsIs, type Lane } from './admission/lane.js';
import type { SchedulerCore } from './core.js';
import type { Decided } from './pipeline.js';
import { stopLeftovers } from './leftovers.js';
import { missedFires, selectCatchup, type CatchupPolicy } from './policy.js';
import { buildRegistry, jobKey } from './registry.js';
import type { LedgerOp, NewRun, SkipRecord } from './store/types.js';

/** Most missed fires of one schedule recorded one by one; older ones are counted, not listed. */
export const MAX_MISSED_PER_SCHEDULE = 10_000;

/** The reason recorded on runs found `running` at start-up. */
export const CRASHED_ERROR = 'the daemon stopped while the run was active';

/** Recovers the ledger, installs the jobs and catches every schedule up. */
export async function recover(core: SchedulerCore, manifests: readonly Manifest[]): Promise<void> {
  const { store, clock } = core.deps;
  await store.migrate();
  // command runs left running: their processes are stopped before the runs end crashed
  const running = await store.runningRuns();
  for (const s of await stopLeftovers(running, await store.runningProcesses(), manifests)) {
    core.deps.commands?.logs.note(s.runId, `the daemon had crashed; stopped leftover ${s.what}`);
    core.events.emit('warning', {
      msg: `${s.app}/${s.job}: run ${s.runId} was left running by a crash; stopped its ${s.what}`,
    });
  }
  const now = clock.now();
  // runs planned ahead whose instant has not come sent nothing: take them back, so their
  // fires are decided again (beyond a margin for clock skew between replicas)
  const planned = running.filter(
    (r) => r.attempts === 0 && r.startedAt !== null && r.startedAt > now + core.plannedMarginMs,
  );
  if (planned.length > 0) await store.write(planned.map((r) => ({ kind: 'withdraw', id: r.id })));
  const crashed = await store.endCrashed(now, CRASHED_ERROR);
  if (crashed > 0)
    core.events.emit('warning', {
      msg: `${crashed} run(s) left running by a crash were ended as crashed`,
    });
  const work = core.install(buildRegistry(manifests), await store.pausedJobs());
  // freezes before catch-up: a frozen job's schedules hold their checkpoints
  await core.loadFreezes(now);
  for (const [key, note] of await store.pauseNotes()) {
    const lane = core.lane(key);
    if (lane) lane.pauseNote = note;
  }
  // skipped instants before catch-up: a skipped fire that came during the downtime is skipped
  const skips = await store.skips();
  for (const s of skips) core.lane(jobKey(s.app, s.job))?.calendar.add(s);
  if (crashed > 0)
    for (const r of running) {
      const ended = await store.getRun(r.id);
      if (ended?.outcome === 'crashed') core.events.emit('run-crashed', ended);
    }
  core.knownSuccesses(await store.lastSuccesses());
  const checkpoints = new Map(
    (await store.checkpoints()).map((c) => [`${jobKey(c.app, c.job)}#${c.scheduleIndex}`, c.at]),
  );
  // queued runs first (they were admitted before the downtime), in FIFO order
  for (const run of await store.queuedRuns()) {
    const lane = core.lane(jobKey(run.app, run.job));
    if (!lane) work.push(core.pipeline.endUnstarted(null, run, 'job removed'));
    else if (run.dueAt !== null && run.dueAt > now) core.addDelayed(run);
    else core.pipeline.admitExisting(lane, run);
  }
  const firstSeen: LedgerOp[] = [];
  for (const lane of core.lanes()) {
    if (lane.removed) continue;
    for (let index = 0; index < lane.job.schedules.length; index++) {
      const at = checkpoints.get(`${lane.key}#${index}`);
      if (at !== undefined) work.push(catchUp(core, lane, index, at, now, false));
    }
    // a schedule seen for the first time starts from now
    firstSeen.push(...core.schedules.startNew(lane, now, false));
  }
  // behind start-up rather than before it: a crash before they are durable only means the next
  // start sees those schedules for the first time again (and starts them from then); 100,000
  // new jobs would otherwise hold start-up for their 100,000 writes
  void core.ledger.submitIndependent(firstSeen);
  await Promise.all(work);
  await core.pipeline.settled();
  await dropStaleSkips(core, skips);
}

/**
 * Skips whose instant every schedule of their job has processed can no longer be consumed (the
 * job was paused, or its schedule changed): they are deleted, so none stays pending for ever.
 */
async function dropStaleSkips(core: SchedulerCore, skips: readonly SkipRecord[]): Promise<void> {
  const ops: LedgerOp[] = [];
  for (const s of skips) {
    const lane = core.lane(jobKey(s.app, s.job));
    if (!lane || !lane.calendar.skipAt(s.at)) continue;
    const indexes = lane.job.schedules.map((_, i) => i);
    if (!indexes.every((i) => (core.schedules.last(lane, i) ?? -Infinity) >= s.at)) continue;
    lane.calendar.consume(s.at);
    ops.push({ kind: 'skip-done', app: s.app, job: s.job, at: s.at });
  }
  if (ops.length > 0) await core.ledger.submit(ops);
}

function missedReason(
  policy: CatchupPolicy,
  late: boolean,
  gap: { from: number; to: number } | undefined,
  frozen: string | null,
): string {
  const why = frozen
    ? frozen
    : late
      ? 'the scheduler was suspended or its clock jumped'
      : gap
        ? `no leader between ${rfc3339Utc(gap.from)} and ${rfc3339Utc(gap.to)}`
        : 'the daemon was down';
  const how =
    policy.mode === 'none'
      ? 'catchup.mode none'
      : `catchup.mode ${policy.mode}` +
        (policy.windowSeconds !== null ? `, window ${policy.windowSeconds} s` : '') +
        (policy.mode === 'all' ? `, max_runs ${policy.maxRuns}` : ', only the newest runs');
  return `missed: ${why} (${how})`;
}

/**
 * Catches one schedule up on the fires in `(after, now]`: the catch-up policy
 * picks the runs, the rest are recorded `missed`, and the checkpoint moves to
 * the newest of them, all in one ledger group. Pushes the schedule's next fire
 * before it returns (synchronously), so the timer never loses it. A frozen lane's schedule
 * holds its checkpoint (the thaw catches it up, `freezes.ts`, with `frozen` as the reason of the
 * fires it records `missed`).
 */
export function catchUp(
  core: SchedulerCore,
  lane: Lane,
  index: number,
  after: number,
  now: number,
  late: boolean,
  frozen: string | null = null,
): Promise<unknown> {
  const job = lane.job;
  const schedule = job.schedules[index]!;
  if (lane.frozen) {
    core.schedules.processedUpTo(lane, index, after);
    core.schedules.pushNext(lane, index, Math.max(now, after));
    return Promise.resolve();
  }
  const found = missedFires(
    (t) => nextFire(schedule, job.job.timezone, t),
    after,
    now,
    MAX_MISSED_PER_SCHEDULE,
  );
  const last = found.fires.at(-1);
  core.schedules.processedUpTo(lane, index, Math.max(after, last ?? after));
  core.schedules.pushNext(lane, index, Math.max(now, after));
  if (last === undefined) return Promise.resolve();
  const checkpoint = core.schedules.checkpoint(lane, index, last);
  // a disabled or paused job does not catch up the time it spent so
  if (!lane.takesScheduled) return core.ledger.submit([checkpoint], false);
  const first = found.fires[0] as number;
  if (late)
    core.events.emit('downtime', {
      job: lane.key,
      from: first,
      to: last,
      fires: found.fires.length + found.skipped,
    });
  if (found.skipped > 0 || found.truncated) {
    core.events.emit('missed-unrecorded', { key: lane.key, count: found.skipped });
    core.events.emit('warning', {
      msg:
        `${lane.key}: ${found.skipped}${found.truncated ? '+' : ''} fire(s) of schedule ${index} before ` +
        `${new Date(first).toISOString()} were missed and counted in cronix_job_missed_total, not recorded one by one`,
    });
  }
  const chosen = selectCatchup(found.fires, now, job.catchup);
  const reason = missedReason(job.catchup, late, core.deps.leader?.gap, frozen);
  const decided: Decided[] = chosen.missed.map((t) => {
    core.events.emit('expected', { key: lane.key, at: t });
    const run = core.newRun(job, index, t, 'schedule');
    // a fire the calendar holds was never to run: recorded skipped, not missed (SPEC §16)
    const held = lane.hold(run, true);
    const row: NewRun = {
      ...run,
      phase: 'ended',
      outcome: held ? 'skipped' : 'missed',
      endedAt: now,
      error: held ? held.reason : reason,
    };
    return { lane, ticket: { ...recordedAsIs(row), skip: held?.skip ?? null } };
  });
  for (const t of chosen.run) {
    core.events.emit('expected', { key: lane.key, at: t });
    core.events.emit('catchup-run', { key: lane.key });
    decided.push({ lane, ticket: lane.admit(core.newRun(job, index, t, 'catchup'), now) });
  }
  return core.pipeline.record(decided, [checkpoint]);
}
