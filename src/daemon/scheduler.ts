/**
 * The daemon's scheduler (SPEC §7, §9): its life cycle and its main loop. It
 * builds the rooms and hands each turn of the timer to them:
 *
 *   timer (`timer.ts`) ─ fires ahead ─→ plan-ahead (`plan-ahead.ts`)
 *                      ─ fires due  ─→ the job's lane decides (`admission/lane.ts`)
 *   → the pipeline records and carries out (`pipeline.ts`)
 *   → the execution room runs it (`execution.ts`) → its end → the lane releases.
 *
 * Start-up recovery and catch-up live in `recovery.ts`, the API's verbs in
 * `verbs.ts`, the schedules' instants and checkpoints in `schedules.ts`,
 * retention in `retention.ts`; metrics and notifications listen to the events
 * (`observers.ts`).
 */
import { attemptStopSeconds } from '../contract/manifest/effective.js';
import type { Manifest } from '../contract/manifest/types.js';
import type { Lane } from './admission/lane.js';
import type { StoreHealth } from './control.js';
import {
  SchedulerError,
  type SchedulerCore,
  type TriggerOptions,
  type TriggerResult,
} from './core.js';
import { IdempotentTriggers } from './idempotency.js';
import { DaemonEmitter } from './events.js';
import { Delayed } from './delayed.js';
import { Backfills } from './backfill/driver.js';
import { Execution } from './execution.js';
import { Freezes, type FreezeSpec } from './freezes.js';
import { PLAN_AHEAD_MS, type SchedulerDeps } from './scheduler-deps.js';
import { Ledger } from './ledger.js';
import { DaemonMetrics } from './metrics.js';
import { Notifications } from './notifications.js';
import { observeDaemon, observeRuns } from './observers.js';
import { Pipeline } from './pipeline.js';
import { PlanAhead } from './plan-ahead.js';
import { recover } from './recovery.js';
import { Lanes } from './lanes.js';
import { buildRegistry, jobKey, type RegisteredJob } from './registry.js';
import { Retention } from './retention.js';
import { nextFireOf, Schedules } from './schedules.js';
import type { BackfillRecord, BackfillSpec, LedgerOp, NewRun, RunRecord } from './store/types.js';
import type { FreezeRecord, PauseNote } from './store/freeze-types.js';
import type { SkipRecord } from './store/skip-types.js';
import { newRun } from './runs.js';
import { buildSupervisor } from './services/build.js';
import type {
  ServiceAction,
  ServiceActionResult,
  ServiceView,
  Supervisor,
} from './services/supervisor.js';
import { TimerLoop } from './timer.js';
import { dueTurn } from './turn.js';
import { within } from './within.js';
import * as verbs from './verbs.js';

export { SchedulerError, type TriggerResult } from './core.js';
export { PLAN_AHEAD_MS, type SchedulerDeps } from './scheduler-deps.js';

/** After the grace period, how long runs get to end while the store fails (SPEC §9 item 6). */
const STOP_FAILING_MS = 3000;

/**
 * Run-end writes wait (up to the ledger's MAX_LAZY_HOLD_MS) while more requests than this are in
 * flight: a burst's tail is read before its ends are committed, while a few long-running jobs
 * in flight hold nothing back. Measured (issue 30, 10,000 fires): holding only while requests
 * waited for a connection let the end commits (a fifth of the burst's CPU) run in the tail.
 */
const HOLD_WHILE_IN_FLIGHT = 16;

/** The scheduler. Create, `start(manifests)`, then `stop()`. */
export class Scheduler implements SchedulerCore {
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  readonly ledger: Ledger;
  readonly timer: TimerLoop;
  readonly schedules: Schedules;
  readonly pipeline: Pipeline;
  readonly notifications: Notifications | null; // null without notifiers
  /** Supervised services (SPEC §17); null without `deps.services`. */
  readonly services: Supervisor | null;
  private readonly execution: Execution;
  readonly planAhead: PlanAhead;
  private readonly retention: Retention;
  private readonly jobLanes = new Lanes();
  readonly delayed: Delayed;
  readonly backfills: Backfills;
  readonly freezes: Freezes;
  private readonly idempotent = new IdempotentTriggers(this);
  private readonly detach: (() => void)[] = [];
  private stopping = false;
  private stopWatch: (() => Promise<void>) | null = null;
  readonly burst = { launching: false };

  constructor(readonly deps: SchedulerDeps) {
    this.events = deps.events ?? new DaemonEmitter();
    this.metrics = deps.metrics ?? new DaemonMetrics(() => deps.clock.now());
    if (!deps.metrics) this.detach.push(observeDaemon(this.events, this.metrics));
    this.ledger = new Ledger(deps.store, {
      onError: (err, retryInMs) =>
        this.events.emit('store-error', { op: 'write', err: err.message, retryInMs }),
      isFatal: (err) => err.name === 'FencedError' || err.name === 'LedgerLostError',
      onFatal: (err) => this.events.emit('fenced', { reason: err.message }),
      // a burst's requests leave, and its answers are read, before its ends are committed (a
      // commit blocks the loop): held while it launches and while more than a few are in flight
      holdLazy: () =>
        this.burst.launching || (deps.transport.inFlight?.() ?? 0) > HOLD_WHILE_IN_FLIGHT,
    });
    this.execution = new Execution({ ...deps, ledger: this.ledger, events: this.events });
    this.pipeline = new Pipeline({
      ledger: this.ledger,
      clock: deps.clock,
      events: this.events,
      launch: (lane, run) =>
        this.execution.launch({
          job: lane.job,
          run,
          stopReason: () => lane.slot(run.id)?.stopReason ?? null,
          done: (ended) => this.pipeline.finished(lane, ended),
        }),
      abort: (id) => this.execution.abort(id),
      drop: (lane) => this.jobLanes.drop(lane),
    });
    this.retention = new Retention(deps.store, this.events, deps.retentionMs, (before) =>
      deps.commands?.logs.sweep(before, async (id) => (await deps.store.getRun(id)) !== null),
    );
    this.timer = new TimerLoop(deps.clock, this.events, {
      onDue: (now, items) => dueTurn(this, now, items),
      onTurn: (now) => this.retention.maybePrune(now),
      onPlan: (now, items) => this.planAhead.plan(now, items),
      lookaheadMs: deps.planAheadMs ?? PLAN_AHEAD_MS,
    });
    this.schedules = new Schedules(this.timer, deps.random ?? Math.random);
    this.delayed = new Delayed(this.timer);
    this.backfills = new Backfills(this);
    this.freezes = new Freezes(this, this.timer);
    this.planAhead = new PlanAhead({
      timer: this.timer,
      ledger: this.ledger,
      events: this.events,
      pipeline: this.pipeline,
      schedules: this.schedules,
      lane: (key) => this.lane(key),
      newRun: (lane, index, nominal) => this.newRun(lane.job, index, nominal, 'schedule'),
    });
    this.notifications = deps.notifiersOf
      ? new Notifications({ ...deps, events: this.events, notifiersOf: deps.notifiersOf })
      : null;
    this.services = buildSupervisor(deps, {
      ledger: this.ledger,
      events: this.events,
      notifications: this.notifications,
      stopping: () => this.stopping,
    });
    this.detach.push(
      observeRuns(this.events, this.metrics, this.notifications, (run) => {
        const key = jobKey(run.app, run.job);
        return this.jobLanes.jobOf(key) ?? deps.watch?.jobOf(key);
      }),
    );
  }

  // ---- views (API, metrics, tests) ----

  now(): number {
    return this.deps.clock.now();
  }

  /** Jobs by `app/job`. */
  jobs(): ReadonlyMap<string, RegisteredJob> {
    return this.jobLanes.registry;
  }

  isPaused(key: string): boolean {
    return this.jobLanes.live(key)?.paused ?? false;
  }

  /** Launched runs of the job not yet released; never more than max_concurrent. */
  activeCount(key: string): number {
    return this.jobLanes.live(key)?.running ?? 0;
  }

  queueLength(key: string): number {
    return this.jobLanes.live(key)?.queued ?? 0;
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  storeHealth(): StoreHealth {
    return this.ledger.health();
  }

  get plannedMarginMs(): number {
    return this.deps.plannedMarginMs ?? 0;
  }

  /** What a launched run waits for before its next attempt, or null. */
  waitingFor(runId: string): string | null {
    return this.execution.rates.waitingFor(runId);
  }

  /** The next nominal fire of a job across its schedules, or null. */
  nextFireOf(key: string): number | null {
    return nextFireOf(this.jobLanes.registry.get(key), this.deps.clock.now());
  }

  lane(key: string): Lane | undefined {
    return this.jobLanes.live(key);
  }

  lanes(): Iterable<Lane> {
    return this.jobLanes.all();
  }

  // ---- verbs (verbs.ts; DaemonControl documents them) ----

  trigger(
    app: string,
    job: string,
    when: verbs.When = {},
    opts: TriggerOptions = {},
  ): Promise<TriggerResult> {
    return this.idempotent.trigger(app, job, when, opts);
  }

  cancel(runId: string): Promise<RunRecord> {
    return verbs.cancel(this, runId);
  }

  replay(runId: string): Promise<TriggerResult> {
    return verbs.replay(this, runId);
  }

  setPaused(app: string, job: string, paused: boolean, note?: verbs.PauseBy): Promise<void> {
    return verbs.setPaused(this, app, job, paused, note);
  }

  /** The note of a paused job (why, who, since when), if it has one. */
  pauseNote(key: string): PauseNote | null {
    return this.jobLanes.live(key)?.pauseNote ?? null;
  }

  /** Skips the job's next fire, or one fire instant (SPEC §16 "Calendars"). */
  skip(app: string, job: string, what: verbs.SkipWhat, by: string): Promise<verbs.SkipResult> {
    return verbs.skip(this, app, job, what, by);
  }

  /** The job's skipped instants whose fire has not come, earliest first. */
  skipsOf(key: string): SkipRecord[] {
    return this.jobLanes.live(key)?.calendar.pending() ?? [];
  }

  freeze(spec: FreezeSpec, by: string): Promise<FreezeRecord> {
    return this.freezes.freeze(spec, by);
  }

  unfreeze(app: string | null, job: string | null, by: string): Promise<FreezeRecord> {
    return this.freezes.unfreeze(app, job, by);
  }

  /** The freezes in force, widest scope first. */
  freezeList(): Promise<FreezeRecord[]> {
    return Promise.resolve(this.freezes.all());
  }

  loadFreezes(now: number): Promise<void> {
    return this.freezes.load(now);
  }

  backfill(spec: BackfillSpec, by: string): Promise<BackfillRecord> {
    return this.backfills.create(spec, by);
  }

  cancelBackfill(id: string, by: string): Promise<BackfillRecord> {
    return this.backfills.cancel(id, by);
  }

  // ---- services (SPEC §17) ----

  serviceViews(): Promise<ServiceView[]> {
    return Promise.resolve(this.services?.list() ?? []);
  }

  serviceAction(
    action: ServiceAction,
    app: string,
    service: string,
    instance?: number,
  ): Promise<ServiceActionResult[]> {
    if (!this.services) throw new SchedulerError('not_found', `no service ${app}/${service}`);
    return this.services.act(action, app, service, instance).catch((err: Error) => {
      throw err.name === 'ServiceNotFound' ? new SchedulerError('not_found', err.message) : err;
    });
  }

  // ---- life cycle ----

  /** Recovers the ledger, catches up, and starts the loop (see `recovery.ts`). */
  async start(manifests: readonly Manifest[]): Promise<void> {
    await recover(this, manifests);
    await this.backfills.start();
    this.notifications?.start();
    // after recovery: a crashed daemon's instances are stopped and ended before new ones start
    this.services?.start(manifests);
    this.events.emit('reloaded', { jobs: this.jobLanes.registry.size });
    this.timer.start();
    // host mode: what never came is detected while this scheduler leads, through its ledger
    if (this.deps.watch) this.stopWatch = await this.deps.watch.startTerm(this.ledger);
  }

  /**
   * Installs a registry: lanes for new jobs, the new definition for kept ones; a removed job's
   * queued and delayed runs end `stopped` (`job removed`), its running runs finish. Returns the
   * writes of those ends.
   */
  install(
    registry: Map<string, RegisteredJob>,
    paused: ReadonlySet<string> = new Set(),
  ): Promise<unknown>[] {
    this.schedules.generation += 1;
    const work: Promise<unknown>[] = [];
    for (const lane of this.jobLanes.install(registry, paused)) {
      this.pipeline.apply(lane, lane.remove());
      for (const run of this.delayed.takeJob(lane.key))
        work.push(this.pipeline.endUnstarted(lane, run, 'job removed'));
    }
    return work;
  }

  /** Replaces the manifests; running runs continue, removed jobs' queues end `stopped`. */
  async reload(manifests: readonly Manifest[]): Promise<void> {
    const now = this.deps.clock.now();
    const work = this.install(buildRegistry(manifests));
    this.freezes.apply(now, false); // a new job inside a frozen scope is frozen too
    this.timer.removeWhere((item) => item.kind === 'fire');
    const firstSeen: LedgerOp[] = [];
    for (const lane of this.jobLanes.all())
      if (!lane.removed) firstSeen.push(...this.schedules.startNew(lane, now, true));
    // a new schedule's checkpoint, in groups (10,000 new jobs are not 10,000 writes)
    work.push(this.ledger.submitIndependent(firstSeen));
    await Promise.all(work);
    await this.services?.reload(manifests);
    this.events.emit('reloaded', { jobs: this.jobLanes.registry.size });
  }

  /** Stops scheduling, lets launched runs finish up to `graceMs`, then stops them; queues stay. */
  async stop(graceMs = 30_000): Promise<{ unflushed: number }> {
    this.stopping = true;
    this.pipeline.stopping = true;
    const stopWatch = this.stopWatch;
    this.stopWatch = null;
    this.backfills.stop();
    const deadline = Date.now() + graceMs;
    await within(stopWatch?.() ?? Promise.resolve(), graceMs);
    const left = (): number => Math.max(0, deadline - Date.now());
    // services stop alongside the runs: each instance with its graceful stop (a term that ended,
    // grace 0, kills them at once); their ends are written before the ledger gives up
    const services = this.services?.stop(graceMs === 0) ?? Promise.resolve();
    await within(this.timer.stop(), left());
    // runs planned ahead whose instant has not come: taken back for the next daemon
    await within(this.planAhead.withdraw(this.jobLanes.all()), left());
    if ((await within(this.settled(), left())) === 'timeout') {
      let stopMs = 0; // command jobs: their process groups get their graceful stop
      for (const lane of this.jobLanes.all()) {
        this.pipeline.apply(lane, lane.stopAll('daemon shutting down'));
        stopMs = Math.max(stopMs, attemptStopSeconds(lane.job.job) * 1000);
      }
      // a failing store would hold the ends of those runs forever: a few seconds, no more
      const failing = this.ledger.health() !== null;
      await within(this.settled(), failing ? STOP_FAILING_MS : 10_000 + stopMs);
    }
    await services;
    if (this.ledger.health() === null) await within(this.ledger.idle(), 10_000);
    // what is still not written is given up and counted (SPEC §9 item 6)
    const unflushed = this.ledger.abandon();
    await within(this.notifications?.stop() ?? Promise.resolve(), 2000);
    for (const off of this.detach.splice(0)) off();
    return { unflushed };
  }

  private async settled(): Promise<void> {
    do {
      await this.execution.settled();
      await this.pipeline.settled();
      await this.ledger.idle();
    } while (this.execution.active > 0 || this.pipeline.busy);
  }

  // ---- runs ----

  /** A new run of a job (queued, not yet decided). */
  newRun(
    job: RegisteredJob,
    index: number | null,
    nominal: number,
    trigger: NewRun['trigger'],
    extra: Partial<NewRun> = {},
  ): NewRun {
    return newRun(job, index, nominal, trigger, this.deps.clock.now(), extra);
  }

  addDelayed(run: NewRun): void {
    this.delayed.add(run);
  }

  takeDelayed(id: string): NewRun | undefined {
    return this.delayed.take(id);
  }

  knownSuccesses(byJob: Map<string, number>): void {
    this.execution.knownSuccesses(byJob);
  }
}
