/**
 * The scheduler's rooms and what is asked of them (`scheduler.ts` adds the life cycle): the
 * rooms, built by `scheduler-rooms.ts`; the views the API, metrics and tests read; the verbs
 * (`verbs.ts`, freezes, backfills, services); and the runs' helpers the rooms call back.
 */
import type { Lane } from './admission/lane.js';
import type { Backfills } from './backfill/driver.js';
import type { StoreHealth } from './control.js';
import {
  SchedulerError,
  type SchedulerCore,
  type TriggerOptions,
  type TriggerResult,
} from './core.js';
import type { Delayed } from './delayed.js';
import type { DaemonEmitter } from './events.js';
import type { Execution } from './execution.js';
import type { Freezes, FreezeSpec } from './freezes.js';
import { IdempotentTriggers } from './idempotency.js';
import { Lanes } from './lanes.js';
import type { Ledger } from './ledger.js';
import type { DaemonMetrics } from './metrics.js';
import type { Notifications } from './notifications.js';
import type { Pipeline } from './pipeline.js';
import type { PlanAhead } from './plan-ahead.js';
import type { RegisteredJob } from './registry.js';
import type { Retention } from './retention.js';
import { newRun } from './runs.js';
import type { SchedulerDeps } from './scheduler-deps.js';
import { buildRooms } from './scheduler-rooms.js';
import { nextFireOf, type Schedules } from './schedules.js';
import type {
  ServiceAction,
  ServiceActionResult,
  ServiceView,
  Supervisor,
} from './services/supervisor.js';
import type { FreezeRecord, PauseNote } from './store/freeze-types.js';
import type { SkipRecord } from './store/skip-types.js';
import type { BackfillRecord, BackfillSpec, NewRun, RunRecord } from './store/types.js';
import type { TimerLoop } from './timer.js';
import * as verbs from './verbs.js';

/**
 * The base of `Scheduler` (`scheduler.ts`): all but the life cycle (start, install, reload,
 * stop).
 */
export abstract class SchedulerBase implements SchedulerCore {
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  readonly ledger: Ledger;
  readonly timer: TimerLoop;
  readonly schedules: Schedules;
  readonly pipeline: Pipeline;
  readonly notifications: Notifications | null; // null without notifiers
  /** Supervised services (SPEC §17); null without `deps.services`. */
  readonly services: Supervisor | null;
  protected readonly execution: Execution;
  readonly planAhead: PlanAhead;
  private readonly retention: Retention;
  protected readonly jobLanes = new Lanes();
  readonly delayed: Delayed;
  readonly backfills: Backfills;
  readonly freezes: Freezes;
  private readonly idempotent = new IdempotentTriggers(this);
  protected readonly detach: (() => void)[] = [];
  protected stopping = false;
  readonly burst = { launching: false };

  constructor(readonly deps: SchedulerDeps) {
    const rooms = buildRooms(this, deps, {
      lanes: this.jobLanes,
      stopping: () => this.stopping,
      detach: this.detach,
    });
    this.events = rooms.events;
    this.metrics = rooms.metrics;
    this.ledger = rooms.ledger;
    this.execution = rooms.execution;
    this.pipeline = rooms.pipeline;
    this.retention = rooms.retention;
    this.timer = rooms.timer;
    this.schedules = rooms.schedules;
    this.delayed = rooms.delayed;
    this.backfills = rooms.backfills;
    this.freezes = rooms.freezes;
    this.planAhead = rooms.planAhead;
    this.notifications = rooms.notifications;
    this.services = rooms.services;
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

  /** See `scheduler.ts`. */
  abstract install(
    registry: Map<string, RegisteredJob>,
    paused?: ReadonlySet<string>,
  ): Promise<unknown>[];
}
