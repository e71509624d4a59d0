/**
 * The scheduler's rooms, built and wired (`scheduler.ts`'s constructor): the event stream and
 * metrics, the ledger, the execution room, the pipeline, retention, the timer loop and what
 * hangs on it (schedules, delayed runs, backfills, freezes, plan-ahead), notifications and
 * supervised services; the observers are attached. The rooms reach the scheduler through
 * `core` (its lanes, its runs, plan-ahead, the burst flag), read when they run, not when built.
 */
import { Backfills } from './backfill/driver.js';
import { Delayed } from './delayed.js';
import { DaemonEmitter } from './events.js';
import { Execution } from './execution.js';
import { Freezes } from './freezes.js';
import type { Lanes } from './lanes.js';
import { Ledger } from './ledger.js';
import { DaemonMetrics } from './metrics.js';
import { Notifications } from './notifications.js';
import { observeDaemon, observeRuns } from './observers.js';
import { Pipeline } from './pipeline.js';
import { PlanAhead } from './plan-ahead.js';
import { jobKey } from './registry.js';
import { Retention } from './retention.js';
import { PLAN_AHEAD_MS, type SchedulerDeps } from './scheduler-deps.js';
import { Schedules } from './schedules.js';
import { buildSupervisor } from './services/build.js';
import type { Supervisor } from './services/supervisor.js';
import { TimerLoop } from './timer.js';
import { dueTurn, type TurnDeps } from './turn.js';

/**
 * Run-end writes wait (up to the ledger's MAX_LAZY_HOLD_MS) while more requests than this are in
 * flight: a burst's tail is read before its ends are committed, while a few long-running jobs
 * in flight hold nothing back. Measured (issue 30, 10,000 fires): holding only while requests
 * waited for a connection let the end commits (a fifth of the burst's CPU) run in the tail.
 */
const HOLD_WHILE_IN_FLIGHT = 16;

/** The rooms of one scheduler. */
export interface SchedulerRooms {
  events: DaemonEmitter;
  metrics: DaemonMetrics;
  ledger: Ledger;
  execution: Execution;
  pipeline: Pipeline;
  retention: Retention;
  timer: TimerLoop;
  schedules: Schedules;
  delayed: Delayed;
  backfills: Backfills;
  freezes: Freezes;
  planAhead: PlanAhead;
  /** Null without notifiers. */
  notifications: Notifications | null;
  /** Null without `deps.services`. */
  services: Supervisor | null;
}

/** What the rooms need of the scheduler besides `core`. */
export interface SchedulerOwn {
  /** Its lanes by job. */
  lanes: Lanes;
  /** Whether it is stopping. */
  stopping: () => boolean;
  /** Where the observers' detach functions go (called at stop). */
  detach: (() => void)[];
}

/** Builds the rooms of the scheduler `core`, in order, from `deps`. */
export function buildRooms(core: TurnDeps, deps: SchedulerDeps, own: SchedulerOwn): SchedulerRooms {
  const events = deps.events ?? new DaemonEmitter();
  const metrics = deps.metrics ?? new DaemonMetrics(() => deps.clock.now());
  if (!deps.metrics) own.detach.push(observeDaemon(events, metrics));
  const ledger = new Ledger(deps.store, {
    onError: (err, retryInMs) =>
      events.emit('store-error', { op: 'write', err: err.message, retryInMs }),
    isFatal: (err) => err.name === 'FencedError' || err.name === 'LedgerLostError',
    onFatal: (err) => events.emit('fenced', { reason: err.message }),
    // a burst's requests leave, and its answers are read, before its ends are committed (a
    // commit blocks the loop): held while it launches and while more than a few are in flight
    holdLazy: () =>
      core.burst.launching || (deps.transport.inFlight?.() ?? 0) > HOLD_WHILE_IN_FLIGHT,
  });
  const execution = new Execution({ ...deps, ledger, events });
  const pipeline: Pipeline = new Pipeline({
    ledger,
    clock: deps.clock,
    events,
    launch: (lane, run) =>
      execution.launch({
        job: lane.job,
        run,
        stopReason: () => lane.slot(run.id)?.stopReason ?? null,
        done: (ended) => pipeline.finished(lane, ended),
      }),
    abort: (id) => execution.abort(id),
    drop: (lane) => own.lanes.drop(lane),
  });
  const retention = new Retention(deps.store, events, deps.retentionMs, (before) =>
    deps.commands?.logs.sweep(before, async (id) => (await deps.store.getRun(id)) !== null),
  );
  const timer = new TimerLoop(deps.clock, events, {
    onDue: (now, items) => dueTurn(core, now, items),
    onTurn: (now) => retention.maybePrune(now),
    onPlan: (now, items) => core.planAhead.plan(now, items),
    lookaheadMs: deps.planAheadMs ?? PLAN_AHEAD_MS,
  });
  const schedules = new Schedules(timer, deps.random ?? Math.random);
  const delayed = new Delayed(timer);
  const backfills = new Backfills(core);
  const freezes = new Freezes(core, timer);
  const planAhead = new PlanAhead({
    timer,
    ledger,
    events,
    pipeline,
    schedules,
    lane: (key) => core.lane(key),
    newRun: (lane, index, nominal) => core.newRun(lane.job, index, nominal, 'schedule'),
  });
  const notifications = deps.notifiersOf
    ? new Notifications({ ...deps, events, notifiersOf: deps.notifiersOf })
    : null;
  const services = buildSupervisor(deps, {
    ledger,
    events,
    notifications,
    stopping: own.stopping,
  });
  own.detach.push(
    observeRuns(events, metrics, notifications, (run) => {
      const key = jobKey(run.app, run.job);
      return own.lanes.jobOf(key) ?? deps.watch?.jobOf(key);
    }),
  );
  return {
    events,
    metrics,
    ledger,
    execution,
    pipeline,
    retention,
    timer,
    schedules,
    delayed,
    backfills,
    freezes,
    planAhead,
    notifications,
    services,
  };
}
