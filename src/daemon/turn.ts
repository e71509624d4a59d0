/**
 * One turn of the scheduler's loop (SPEC §7, §9 item 5): what is due now is
 * handed to its room — a planned run's instant to plan-ahead, a delayed run to
 * its lane, a scheduled fire to its lane's decision (or, when it comes more than
 * {@link LATE_MS} late, to catch-up) — and the schedules' checkpoints move.
 */
import type { SchedulerCore } from './core.js';
import type { Delayed } from './delayed.js';
import type { Freezes } from './freezes.js';
import type { PlanAhead } from './plan-ahead.js';
import { catchUp } from './recovery.js';
import type { LedgerOp } from './store/types.js';
import type { TimerItem } from './timer.js';

/** A fire that comes due later than this went through downtime (SPEC §9 item 5). */
export const LATE_MS = 60_000;
/** Planned runs launched per turn of the event loop when many are due at once. */
export const LAUNCH_SLICE = 100;

/** What a turn needs: the core and two of its rooms. */
export interface TurnDeps extends SchedulerCore {
  planAhead: PlanAhead;
  delayed: Delayed;
  freezes: Freezes;
  /** True while a burst of launches yields to the event loop between slices. */
  burst: { launching: boolean };
}

/** One turn of the event loop in the middle of a burst of launches. */
async function yieldLaunching(burst: { launching: boolean }): Promise<void> {
  burst.launching = true;
  try {
    await new Promise((r) => setImmediate(r));
  } finally {
    burst.launching = false;
  }
}

/** Carries out everything due at `now`, earliest first. */
export async function dueTurn(core: TurnDeps, now: number, items: TimerItem[]): Promise<void> {
  const d = core;
  const work: Promise<unknown>[] = [];
  const checkpoints = new Map<string, LedgerOp>();
  /** Planned runs' checkpoints, written a slice at a time (lazily: they only move a mark). */
  const moved: LedgerOp[] = [];
  const writeMoved = (): void => {
    if (moved.length > 0) void d.ledger.submit(moved.splice(0), false);
  };
  let due = 0;
  let launched = 0;
  for (const item of items) {
    if (item.kind === 'launch') {
      const checkpoint = d.planAhead.due(item.runId);
      if (checkpoint) moved.push(checkpoint);
      // let the responses of the runs already sent in (and the next requests out) between
      // slices: a burst of 10,000 launches in one turn would hold every reply back
      if (++launched % LAUNCH_SLICE === 0) {
        writeMoved();
        await yieldLaunching(d.burst);
      }
      continue;
    }
    if (item.kind === 'thaw') {
      work.push(d.freezes.expire(now));
      continue;
    }
    if (item.kind === 'delayed') {
      const run = d.delayed.take(item.runId);
      if (!run) continue; // cancelled, or its job removed
      due += 1;
      const lane = core.lane(item.key);
      if (lane) core.pipeline.admitExisting(lane, run);
      else work.push(core.pipeline.endUnstarted(null, run, 'job removed'));
      continue;
    }
    const lane = core.lane(item.key);
    if (!lane || item.generation !== core.schedules.generation) continue;
    if (lane.frozen) {
      // frozen: nothing is recorded and the checkpoint stays; the thaw catches these fires up
      core.schedules.pushNext(lane, item.index, item.nominal);
      continue;
    }
    if (now - item.at > LATE_MS) {
      // a wake-up this late is downtime: the catch-up policy decides (SPEC §9 item 5)
      const after = core.schedules.last(lane, item.index) ?? item.nominal - 1;
      work.push(catchUp(core, lane, item.index, after, now, true));
      continue;
    }
    core.schedules.processedUpTo(lane, item.index, item.nominal);
    core.schedules.pushNext(lane, item.index, item.nominal);
    const checkpoint = core.schedules.checkpoint(lane, item.index, item.nominal);
    checkpoints.set(`${item.key}#${item.index}`, checkpoint);
    if (!lane.takesScheduled) continue;
    due += 1;
    core.events.emit('expected', { key: lane.key, at: item.nominal });
    const run = core.newRun(lane.job, item.index, item.nominal, 'schedule');
    work.push(core.pipeline.record([{ lane, ticket: lane.admit(run, now) }]));
  }
  writeMoved();
  // after the fires, in a later transaction: a crash in between leaves a checkpoint behind
  // its fires, and the fire claim keeps those instants from firing again
  work.push(core.ledger.submit([...checkpoints.values()], false));
  core.events.emit('tick', { now, due });
  await Promise.all(work);
}
