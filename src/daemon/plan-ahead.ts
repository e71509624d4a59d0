/**
 * Plan-ahead (SPEC §7 "a row before dispatch"): fires due within the
 * look-ahead are decided before their instant when their lane is idle (the lane
 * decides that, `Lane.plan`): the row is recorded `planned` with its start at
 * the instant (fire claim and run-key claim taken), and its requests leave at
 * the instant from a `launch` timer item — nothing is sent early, nothing is
 * written at the instant. A fire the lane will not plan is put back to be
 * decided at its time. The durable checkpoint moves once a planned run is
 * launched: a run taken back never moved it.
 */
import { urlTarget } from '../fire/url-target.js';
import type { Lane } from './admission/lane.js';
import type { DaemonEmitter } from './events.js';
import type { Ledger } from './ledger.js';
import type { Pipeline } from './pipeline.js';
import type { Schedules } from './schedules.js';
import type { LedgerOp, NewRun } from './store/types.js';
import type { TimerItem, TimerLoop } from './timer.js';

/** What plan-ahead needs of the scheduler. */
export interface PlanAheadDeps {
  timer: TimerLoop;
  ledger: Ledger;
  events: DaemonEmitter;
  pipeline: Pipeline;
  schedules: Schedules;
  /** The lane of a live job (not removed), or undefined. */
  lane(key: string): Lane | undefined;
  newRun(lane: Lane, index: number, nominal: number): NewRun;
}

type FireItem = Extract<TimerItem, { kind: 'fire' }>;

/** See the module comment. */
export class PlanAhead {
  /** The checkpoint each planned run moves once launched, by run id. */
  private readonly checkpoints = new Map<string, { lane: Lane; op: LedgerOp }>();

  constructor(private readonly deps: PlanAheadDeps) {}

  /** Fires due within the look-ahead, handed over by the timer before their time. */
  async plan(now: number, items: FireItem[]): Promise<void> {
    const { timer, schedules, pipeline, events } = this.deps;
    const work: Promise<unknown>[] = [];
    for (const item of items) {
      const lane = this.deps.lane(item.key);
      if (!lane || item.generation !== schedules.generation) continue;
      const run = this.deps.newRun(lane, item.index, item.nominal);
      const ticket = lane.plan(run, item.at, now);
      if (!ticket) {
        timer.push({ ...item, noPlan: true }); // decided at its time
        continue;
      }
      schedules.processedUpTo(lane, item.index, item.nominal);
      schedules.pushNext(lane, item.index, item.nominal);
      events.emit('expected', { key: lane.key, at: item.nominal });
      // parse the job's URL now (it is cached), not as the request leaves at the instant
      if (lane.job.job.request !== undefined) urlTarget(lane.job.job.request.url);
      this.checkpoints.set(run.id, {
        lane,
        op: schedules.checkpoint(lane, item.index, item.nominal),
      });
      timer.push({ at: item.at, kind: 'launch', runId: run.id, key: lane.key });
      work.push(pipeline.record([{ lane, ticket }]));
    }
    await Promise.all(work);
  }

  /**
   * A planned run's instant has come: its requests leave now, or as soon as its row is durable.
   * Returns its checkpoint op, which moves with it — the caller writes it, after the row (the
   * ledger keeps order), with the other due runs' (one ledger group each was 10,000 groups and
   * promises at a burst) — or null when the run did not go ahead.
   */
  due(runId: string): LedgerOp | null {
    const planned = this.checkpoints.get(runId);
    if (!planned) return null;
    this.checkpoints.delete(runId);
    const { lane, op } = planned;
    const writing = lane.slot(runId)?.state === 'claiming';
    const effects = lane.due(runId);
    this.deps.pipeline.apply(lane, effects);
    return writing || effects.some((e) => e.kind === 'launch') ? op : null;
  }

  /** Shutdown: planned runs whose instant has not come are taken back for the next daemon. */
  async withdraw(lanes: Iterable<Lane>): Promise<void> {
    const ops: LedgerOp[] = [];
    for (const lane of lanes)
      for (const id of lane.withdrawPlanned()) {
        this.checkpoints.delete(id);
        ops.push({ kind: 'withdraw', id });
      }
    if (ops.length > 0) await this.deps.ledger.submit(ops);
  }
}
