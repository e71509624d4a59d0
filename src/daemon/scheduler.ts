/**
 * The daemon's core (SPEC §7, §9): it owns the lanes (one admission authority
 * per job), the ordered ledger writer and the timer, and runs the one pipeline
 * every run goes through, whatever caused it:
 *
 *   plan (the lane decides and takes, synchronously)
 *   → record (the row, its run-key claim and its fire claim in one transaction)
 *   → launch (the per-fire engine, once the row is durable)
 *   → end (durable) → release the slot → drain the queue.
 *
 * Start-up recovery and catch-up live in `recovery.ts`, the verbs of the API
 * (trigger, cancel, replay, pause) in `verbs.ts`, the timer in `timer.ts`,
 * retention in `retention.ts`; this file wires them.
 */
import { attemptStopSeconds } from '../contract/manifest/effective.js';
import type { Manifest } from '../contract/manifest/types.js';
import { rfc3339Utc, runKey as makeRunKey } from '../contract/run.js';
import { nextFire } from '../contract/schedule/index.js';
import { uuidv7 } from '../fire/ids.js';
import type { Clock, CommandRunner, Transport } from '../fire/types.js';
import { urlTarget } from '../fire/url-target.js';
import { execute, type ExecuteCommand } from './executor.js';
import { DaemonEmitter } from './events.js';
import type { RunGuard } from './global-locks.js';
import { Lane, type Decision, type Slot } from './lane.js';
import { Ledger } from './ledger.js';
import { Notifications } from './notifications.js';
import type { ResolvedNotifier } from '../notify/resolve.js';
import { DaemonMetrics } from './metrics.js';
import { jitterMs } from './policy.js';
import { buildRegistry, jobKey, type RegisteredJob } from './registry.js';
import { Retention } from './retention.js';
import type { RunLogs } from './run-logs.js';
import type { EndPatch, LedgerOp, LedgerResult, NewRun, RunRecord, Store } from './store/types.js';
import { TimerLoop, type TimerItem } from './timer.js';
import {
  scheduleKey,
  type AdmissionName,
  type Planned,
  type SchedulerCore,
  type TriggerResult,
} from './core.js';
import { catchUp, recover } from './recovery.js';
import * as verbs from './verbs.js';

export { SchedulerError, type TriggerResult } from './core.js';

/** Dependencies of the scheduler. */
export interface SchedulerDeps {
  store: Store;
  clock: Clock;
  transport: Transport;
  /** Resolved secret values of a job; the first signs. */
  secretsFor(job: RegisteredJob): readonly string[];
  /** The per-attempt guard of a run (the global lock of `concurrency_scope: global`). */
  guardFor?(job: RegisteredJob, runKey: string, signal: AbortSignal): RunGuard | undefined;
  /** Uniform [0, 1) for random jitter (injected for tests). */
  random?: () => number;
  /** Ended runs older than this are deleted (checked hourly); undefined = keep forever. */
  retentionMs?: number;
  /**
   * How long before their instant fires are planned (rows recorded ahead);
   * default {@link PLAN_AHEAD_MS}; 0 decides every fire at its instant.
   */
  planAheadMs?: number;
  /**
   * At start-up, a `running` row that sent nothing and whose start is more than
   * this ahead is taken back (it was planned ahead by a process that died).
   * 0 on one machine; the replicas' allowed clock skew in a cluster.
   */
  plannedMarginMs?: number;
  /** Event stream and metrics to use (kept across the terms of a replica); new ones by default. */
  events?: DaemonEmitter;
  metrics?: DaemonMetrics;
  /**
   * High availability: this term's leader epoch, sent with every attempt, and
   * the check made before every attempt (null = go on; else why not: the lease
   * could not be renewed in time).
   */
  leader?: { epoch: number; mayAttempt(): string | null };
  /** Command jobs (SPEC §11): the runner, `PATH HOME LANG TZ` of the daemon, the run logs. */
  commands?: { runner: CommandRunner; hostEnv: Readonly<Record<string, string>>; logs: RunLogs };
  /** A command job's resolved `env_from_secrets`. */
  envSecretsFor?(job: RegisteredJob): Readonly<Record<string, string>>;
  /**
   * Notifications (SPEC §12): the resolved notifiers of an app by name. Absent: nothing is
   * notified (nothing recorded either).
   */
  notifiersOf?(app: string): ReadonlyMap<string, ResolvedNotifier> | undefined;
}

/** The scheduler. Create, `start(manifests)`, then `stop()`. */
export class Scheduler implements SchedulerCore {
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  readonly ledger: Ledger;
  readonly timer: TimerLoop;
  /** Notifications of this scheduler (SPEC §12); null without notifiers. */
  readonly notifications: Notifications | null;
  /** Lanes by `app/job`; a removed job's lane stays until its last run ends. */
  readonly lanes = new Map<string, Lane>();
  /** Delayed manual runs (not yet due) by run id. */
  readonly delayed = new Map<string, NewRun>();
  /** Runs planned ahead, waiting for their instant: their row once durable, and whether it came. */
  private readonly planned = new Map<
    string,
    { lane: Lane; slot: Slot; run: RunRecord | null; due: boolean; checkpoint: LedgerOp }
  >();
  /** Last scheduled instant processed per schedule (the checkpoint, in memory). */
  readonly processed = new Map<string, number>();
  private registry = new Map<string, RegisteredJob>();
  private readonly retention: Retention;
  private readonly lastSuccess = new Map<string, number | null>();
  /** Whether {@link lastSuccess} holds every job's last success from the ledger (absent: none). */
  private successesKnown = false;
  private readonly inflight = new Set<Promise<void>>();
  private generation = 0;
  private stopping = false;
  /** True while a turn's planned runs are being launched, slice by slice. */
  private launching = false;

  constructor(readonly deps: SchedulerDeps) {
    this.events = deps.events ?? new DaemonEmitter();
    this.metrics = deps.metrics ?? new DaemonMetrics(() => deps.clock.now());
    this.ledger = new Ledger(deps.store, {
      onError: (err, retryInMs) => {
        this.metrics.storeError('write');
        this.events.emit('store-error', { op: 'write', err: err.message, retryInMs });
      },
      isFatal: (err) => err.name === 'FencedError',
      onFatal: (err) => this.events.emit('fenced', { reason: err.message }),
      // a burst's requests leave before its ends are committed (a commit blocks the loop)
      holdLazy: () => this.launching || (deps.transport.backlog?.() ?? 0) > 0,
    });
    this.retention = new Retention(deps.store, this.events, deps.retentionMs, (before) =>
      deps.commands?.logs.sweep(before, async (id) => (await deps.store.getRun(id)) !== null),
    );
    this.timer = new TimerLoop(deps.clock, this.events, {
      onDue: (now, items) => this.onDue(now, items),
      onTurn: (now) => this.retention.maybePrune(now),
      onPlan: (now, items) => this.onPlan(now, items),
      lookaheadMs: deps.planAheadMs ?? PLAN_AHEAD_MS,
    });
    this.events.on('store-error', (e) => {
      if (e.op !== 'write') this.metrics.storeError(e.op);
    });
    this.notifications = deps.notifiersOf
      ? new Notifications({
          store: deps.store,
          clock: deps.clock,
          events: this.events,
          notifiersOf: deps.notifiersOf,
        })
      : null;
  }

  // ---- views (API, metrics, tests) ----

  now(): number {
    return this.deps.clock.now();
  }

  /** Jobs by `app/job`. */
  jobs(): ReadonlyMap<string, RegisteredJob> {
    return this.registry;
  }

  isPaused(key: string): boolean {
    return this.lanes.get(key)?.paused ?? false;
  }

  /** Running runs of the job (their `running` row is durable); never more than max_concurrent. */
  activeCount(key: string): number {
    return this.lanes.get(key)?.running ?? 0;
  }

  queueLength(key: string): number {
    return this.lanes.get(key)?.queued ?? 0;
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  get plannedMarginMs(): number {
    return this.deps.plannedMarginMs ?? 0;
  }

  /** The next nominal fire of a job across its schedules, or null. */
  nextFireOf(key: string): number | null {
    const job = this.registry.get(key);
    if (!job || !job.enabled) return null;
    const now = this.deps.clock.now();
    let best: number | null = null;
    for (const s of job.schedules) {
      const n = nextFire(s, job.job.timezone, now);
      if (n !== null && (best === null || n < best)) best = n;
    }
    return best;
  }

  // ---- verbs (verbs.ts) ----

  /** A manual trigger now, at an instant, or after a delay. */
  trigger(
    app: string,
    job: string,
    when: { at?: number; afterSeconds?: number } = {},
  ): Promise<TriggerResult> {
    return verbs.trigger(this, app, job, when);
  }

  /** Cancels a queued, delayed or active run. */
  cancel(runId: string): Promise<RunRecord> {
    return verbs.cancel(this, runId);
  }

  /** A new run for an ended one. */
  replay(runId: string): Promise<TriggerResult> {
    return verbs.replay(this, runId);
  }

  /** Pauses or resumes a job's scheduled fires. */
  setPaused(app: string, job: string, paused: boolean): Promise<void> {
    return verbs.setPaused(this, app, job, paused);
  }

  // ---- life cycle ----

  /** Recovers the ledger, catches up, and starts the loop (see `recovery.ts`). */
  async start(manifests: readonly Manifest[]): Promise<void> {
    await recover(this, manifests);
    this.notifications?.start();
    this.events.emit('reloaded', { jobs: this.registry.size });
    this.timer.start();
  }

  /**
   * Installs a registry: lanes for new jobs, the new definition for kept ones;
   * a removed job's queued and delayed runs end `stopped` (`job removed`), its
   * running runs finish. Returns the writes of those ends.
   */
  install(
    registry: Map<string, RegisteredJob>,
    paused: ReadonlySet<string> = new Set(),
  ): Promise<unknown>[] {
    this.registry = registry;
    this.generation += 1;
    const work: Promise<unknown>[] = [];
    for (const [key, job] of registry) {
      const lane = this.lanes.get(key);
      if (lane) {
        lane.job = job;
        lane.removed = false;
      } else this.lanes.set(key, new Lane(job, paused.has(key)));
    }
    for (const [key, lane] of this.lanes) {
      if (registry.has(key)) continue;
      lane.removed = true;
      for (const run of lane.clearQueue()) work.push(this.endUnstarted(run, 'job removed'));
      for (const [id, run] of this.delayed) {
        if (jobKey(run.app, run.job) !== key) continue;
        this.delayed.delete(id);
        work.push(this.endUnstarted(run, 'job removed'));
      }
      this.gauges(lane);
      if (lane.active === 0) this.lanes.delete(key);
    }
    return work;
  }

  /** Replaces the manifests; running runs continue, removed jobs' queues end `stopped`. */
  async reload(manifests: readonly Manifest[]): Promise<void> {
    const now = this.deps.clock.now();
    const work = this.install(buildRegistry(manifests));
    this.timer.removeWhere((item) => item.kind === 'fire');
    const firstSeen: LedgerOp[] = [];
    for (const lane of this.lanes.values()) {
      if (lane.removed) continue;
      for (let index = 0; index < lane.job.schedules.length; index++) {
        const k = scheduleKey(lane.key, index);
        let last = this.processed.get(k);
        if (last === undefined) {
          last = now;
          this.processed.set(k, now);
          firstSeen.push(this.checkpointOp(lane, index, now));
        }
        this.pushNext(lane, index, Math.max(now, last));
      }
    }
    // a new schedule's checkpoint, in groups (10,000 new jobs are not 10,000 writes)
    work.push(this.ledger.submitIndependent(firstSeen));
    await Promise.all(work);
    this.events.emit('reloaded', { jobs: this.registry.size });
  }

  /** Stops scheduling, lets active runs finish up to `graceMs`, then stops them; queued runs stay. */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + graceMs;
    const left = (): number => Math.max(0, deadline - Date.now());
    await within(this.timer.stop(), left());
    // runs planned ahead whose instant has not come: take them back for the next daemon
    const unlaunched = [...this.planned.entries()];
    this.planned.clear();
    if (unlaunched.length > 0) {
      await within(
        this.ledger.submit(unlaunched.map(([id]) => ({ kind: 'withdraw', id }))),
        left(),
      );
      for (const [id, p] of unlaunched) this.releaseSlot(p.lane, id);
    }
    if ((await within(this.settled(), left())) === 'timeout') {
      let stopMs = 0; // command jobs: their process groups get their graceful stop
      for (const lane of this.lanes.values())
        for (const slot of lane.allSlots()) {
          lane.stop(slot.run.id, 'daemon shutting down');
          stopMs = Math.max(stopMs, attemptStopSeconds(lane.job.job) * 1000);
        }
      await within(this.settled(), 10_000 + stopMs);
    }
    await within(this.ledger.idle(), 10_000);
    await this.notifications?.stop();
  }

  private async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    await this.ledger.idle();
    if (this.inflight.size > 0) await this.settled();
  }

  // ---- the timer ----

  private async onDue(now: number, items: TimerItem[]): Promise<void> {
    const work: Promise<unknown>[] = [];
    const checkpoints = new Map<string, LedgerOp>();
    let due = 0;
    let launched = 0;
    for (const item of items) {
      if (item.kind === 'launch') {
        this.launchPlanned(item.runId);
        // let the responses of the runs already sent in (and the next requests out) between
        // slices: a burst of 10,000 launches in one turn would hold every reply back
        if (++launched % LAUNCH_SLICE === 0) await this.yieldLaunching();
        continue;
      }
      if (item.kind === 'delayed') {
        const run = this.delayed.get(item.runId);
        if (!run) continue; // cancelled, or its job removed
        this.delayed.delete(item.runId);
        const lane = this.lanes.get(item.key);
        due += 1;
        work.push(
          lane && !lane.removed
            ? this.admitExisting(lane, run)
            : this.endUnstarted(run, 'job removed'),
        );
        continue;
      }
      const lane = this.lanes.get(item.key);
      if (!lane || lane.removed || item.generation !== this.generation) continue;
      const k = scheduleKey(item.key, item.index);
      if (now - item.at > LATE_MS) {
        // a wake-up this late is downtime: the catch-up policy decides (SPEC §9 item 5)
        work.push(
          catchUp(this, lane, item.index, this.processed.get(k) ?? item.nominal - 1, now, true),
        );
        continue;
      }
      this.processed.set(k, item.nominal);
      this.pushNext(lane, item.index, item.nominal);
      checkpoints.set(k, this.checkpointOp(lane, item.index, item.nominal));
      if (!lane.job.enabled || lane.paused) continue;
      due += 1;
      this.metrics.expected(lane.key, item.nominal);
      const run = this.newRun(lane.job, item.index, item.nominal, 'schedule');
      work.push(this.record([this.plan(lane, run)]));
    }
    // after the fires, in a later transaction: a crash in between leaves a checkpoint behind
    // its fires, and the fire claim keeps those instants from firing again
    work.push(this.ledger.submit([...checkpoints.values()], false));
    this.events.emit('tick', { now, due });
    await Promise.all(work);
  }

  /** One turn of the event loop in the middle of a burst of launches. */
  private async yieldLaunching(): Promise<void> {
    this.launching = true;
    try {
      await new Promise((r) => setImmediate(r));
    } finally {
      this.launching = false;
    }
  }

  /**
   * Plans fires due within the look-ahead (SPEC §7 "a row before dispatch",
   * issue 12): a fire of an idle lane is admitted now, its row recorded
   * `running` with its start at the fire's instant (fire claim and run-key
   * claim taken), and its requests leave at that instant from a `launch` item
   * — nothing is sent early, and nothing is written at the instant. A fire of a
   * busy, paused or disabled lane is put back to be decided at its time.
   */
  private async onPlan(now: number, items: Extract<TimerItem, { kind: 'fire' }>[]): Promise<void> {
    const work: Promise<unknown>[] = [];
    for (const item of items) {
      const lane = this.lanes.get(item.key);
      if (!lane || lane.removed || item.generation !== this.generation) continue;
      const job = lane.job;
      if (!job.enabled || lane.paused || lane.active > 0 || lane.queued > 0 || item.at <= now) {
        this.timer.push({ ...item, noPlan: true });
        continue;
      }
      const k = scheduleKey(item.key, item.index);
      this.processed.set(k, item.nominal);
      this.pushNext(lane, item.index, item.nominal);
      this.metrics.expected(lane.key, item.nominal);
      const run = this.newRun(job, item.index, item.nominal, 'schedule');
      // parse the job's URL now (it is cached), not as the request leaves at the instant
      if (job.job.request !== undefined) urlTarget(job.job.request.url);
      const planned = this.plan(lane, run, item.at);
      const slot = planned.decision && 'slot' in planned.decision ? planned.decision.slot : null;
      if (slot) {
        // the durable checkpoint moves when the run is launched: a run taken back never moved it
        const checkpoint = this.checkpointOp(lane, item.index, item.nominal);
        this.planned.set(run.id, { lane, slot, run: null, due: false, checkpoint });
        this.timer.push({ at: item.at, kind: 'launch', runId: run.id, key: lane.key });
      }
      work.push(this.record([planned]));
    }
    await Promise.all(work);
  }

  /** A planned run's instant has come: its requests leave now (once its row is durable). */
  private launchPlanned(runId: string): void {
    const p = this.planned.get(runId);
    if (!p) return; // withdrawn, or its row was not recorded
    if (!p.run) {
      p.due = true; // launched when its row is durable
      return;
    }
    this.planned.delete(runId);
    this.launch(p.lane, p.slot, p.run);
    void this.ledger.submit([p.checkpoint], false);
  }

  /** Pushes the next fire of a schedule after `after` onto the timer, jittered. */
  pushNext(lane: Lane, index: number, after: number): void {
    const job = lane.job;
    const schedule = job.schedules[index]!;
    const nominal = nextFire(schedule, job.job.timezone, after);
    if (nominal === null) return;
    const { stable_seconds, random_seconds } = job.policy.jitter;
    let at = nominal;
    if (stable_seconds > 0 || random_seconds > 0) {
      at += jitterMs(
        { app: job.app, job: job.job.name, scheduleIndex: index },
        stable_seconds,
        random_seconds,
        (this.deps.random ?? Math.random)(),
        nominal,
        nextFire(schedule, job.job.timezone, nominal),
      );
    }
    this.timer.push({
      at,
      kind: 'fire',
      key: lane.key,
      index,
      nominal,
      generation: this.generation,
    });
  }

  /** Holds a delayed manual run until its due time. */
  addDelayed(run: NewRun): void {
    this.delayed.set(run.id, run);
    this.timer.push({
      at: run.dueAt as number,
      kind: 'delayed',
      runId: run.id,
      key: jobKey(run.app, run.job),
    });
  }

  checkpointOp(lane: Lane, index: number, at: number): LedgerOp {
    return {
      kind: 'checkpoint',
      ref: { app: lane.job.app, job: lane.job.job.name, scheduleIndex: index },
      at,
    };
  }

  // ---- the pipeline ----

  /** A new run of a job (queued, not yet decided). */
  newRun(
    job: RegisteredJob,
    index: number | null,
    nominal: number,
    trigger: NewRun['trigger'],
    extra: Partial<NewRun> = {},
  ): NewRun {
    const now = this.deps.clock.now();
    return {
      id: uuidv7(now),
      runKey: makeRunKey(job.app, job.job.name, nominal, job.hashes[index ?? 0] as string),
      app: job.app,
      job: job.job.name,
      scheduleIndex: index,
      scheduledTime: nominal,
      trigger,
      phase: 'queued',
      outcome: null,
      attempts: 0,
      lastStatus: null,
      createdAt: now,
      startedAt: null,
      endedAt: null,
      dueAt: null,
      error: null,
      attemptLog: [],
      outputTruncated: false,
      ...extra,
    };
  }

  /** The lane decides for a new run, synchronously; the row takes the decided shape. */
  plan(lane: Lane, run: NewRun, startAt?: number): Planned {
    const now = startAt ?? this.deps.clock.now();
    const decision = lane.admit(run);
    this.metrics.dispatched(lane.key, decision.kind);
    let row: NewRun;
    switch (decision.kind) {
      case 'start':
        row = { ...run, phase: 'running', startedAt: now, dueAt: null };
        break;
      case 'replace': // recorded queued: it starts once the run it replaces has ended
      case 'queue':
        row = run;
        break;
      case 'skip':
      case 'queue_full':
        row = {
          ...run,
          phase: 'ended',
          outcome: decision.kind === 'skip' ? 'skipped' : 'queue_full',
          endedAt: now,
          error: decision.reason,
        };
    }
    if (decision.kind === 'queue') this.gauges(lane);
    return { lane, row, decision };
  }

  /**
   * Records planned runs (and `extra` ops such as their checkpoint) as one
   * group, then dispatches what started. Null for a fire whose instant was
   * already recorded.
   */
  async record(planned: Planned[], extra: LedgerOp[] = []): Promise<(TriggerResult | null)[]> {
    const ops: LedgerOp[] = planned.map((p) => ({ kind: 'insert', run: p.row }));
    const results = await this.ledger.submit([...ops, ...extra]);
    return planned.map((p, i) => this.afterInsert(p, results[i] as LedgerResult));
  }

  private afterInsert(
    { lane, row, decision }: Planned,
    result: LedgerResult,
  ): TriggerResult | null {
    const slot = decision && 'slot' in decision ? decision.slot : null;
    if (result.kind !== 'recorded' || result.run.phase !== 'running') this.planned.delete(row.id);
    if (result.kind !== 'recorded') {
      // the instant already has a row (a second scheduler, a clock gone back): undo
      if (slot) this.releaseSlot(lane, row.id);
      else if (decision?.kind === 'queue') lane.unqueue(row.id);
      this.gauges(lane);
      this.events.emit('info', {
        msg: `${lane.key}: the fire of ${rfc3339Utc(row.scheduledTime)} is already in the ledger; not fired again`,
      });
      return null;
    }
    const run = result.run;
    this.events.emit('run-recorded', run);
    const planned = this.planned.get(run.id);
    if (planned && run.phase === 'running') {
      planned.run = run;
      if (planned.due) this.launchPlanned(run.id);
    } else if (slot && run.phase === 'running') this.launch(lane, slot, run);
    else if (slot && run.phase === 'queued') void this.startAfter(lane, slot);
    else if (run.phase === 'ended') {
      if (slot) this.releaseSlot(lane, run.id); // its run key was taken: recorded duplicate
      this.ended(lane, run);
    }
    return { run, admission: admissionName(decision, run) };
  }

  /** Admits a run that already has a queued row (a delayed run now due, a recovered one). */
  async admitExisting(lane: Lane, run: NewRun): Promise<TriggerResult | null> {
    const decision = lane.admit(run);
    this.metrics.dispatched(lane.key, decision.kind);
    this.gauges(lane);
    switch (decision.kind) {
      case 'start':
        return this.startSlot(lane, decision.slot);
      case 'replace':
        void this.startAfter(lane, decision.slot);
        return { run: { ...run, seq: 0 }, admission: 'started' };
      case 'queue': {
        await this.ledger.submit([{ kind: 'due', id: run.id }]);
        return { run: { ...run, dueAt: null, seq: 0 }, admission: 'queued' };
      }
      case 'skip':
      case 'queue_full': {
        const outcome = decision.kind === 'skip' ? 'skipped' : 'queue_full';
        const patch = { outcome, endedAt: this.deps.clock.now(), error: decision.reason } as const;
        const [res] = await this.ledger.submit([{ kind: 'end', id: run.id, patch }]);
        if (res?.kind !== 'ended') return null;
        this.ended(lane, res.run);
        return { run: res.run, admission: decision.kind === 'skip' ? 'skipped' : 'queue_full' };
      }
    }
  }

  /** Claims and starts a queued run that holds a slot. */
  private async startSlot(lane: Lane, slot: Slot): Promise<TriggerResult | null> {
    const op: LedgerOp = { kind: 'start', id: slot.run.id, startedAt: this.deps.clock.now() };
    const [res] = (await this.ledger.submit([op])) as [LedgerResult];
    if (res.kind === 'started') {
      this.launch(lane, slot, res.run);
      return { run: res.run, admission: 'started' };
    }
    this.releaseSlot(lane, slot.run.id);
    if (res.kind !== 'duplicate') return null;
    this.ended(lane, res.run);
    return { run: res.run, admission: 'skipped' };
  }

  /**
   * Replace: waits for the replaced run to end, then starts this one — unless
   * it was stopped meanwhile (replaced in turn, cancelled): then it ends
   * `stopped` without sending anything.
   */
  private async startAfter(lane: Lane, slot: Slot): Promise<void> {
    await slot.waitFor?.done;
    if (slot.stopReason === null) {
      await this.startSlot(lane, slot);
      return;
    }
    await this.endUnstarted(slot.run, slot.stopReason);
    this.releaseSlot(lane, slot.run.id);
  }

  /** Ends a run that never started (cancelled, job removed); null when it had ended already. */
  async endUnstarted(run: NewRun, reason: string): Promise<RunRecord | null> {
    const patch: EndPatch = { outcome: 'stopped', endedAt: this.deps.clock.now(), error: reason };
    const [res] = await this.ledger.submit([{ kind: 'end', id: run.id, patch }]);
    if (res?.kind !== 'ended') return null;
    this.ended(this.lanes.get(jobKey(run.app, run.job)) ?? null, res.run);
    return res.run;
  }

  /** Starts queued runs while their lane has room (FIFO). */
  drain(lane: Lane): void {
    if (this.stopping) return;
    for (let slot = lane.takeNext(); slot; slot = lane.takeNext()) void this.startSlot(lane, slot);
    this.gauges(lane);
  }

  private releaseSlot(lane: Lane, id: string): void {
    lane.release(id);
    if (lane.removed && lane.active === 0 && this.lanes.get(lane.key) === lane)
      this.lanes.delete(lane.key);
    this.gauges(lane);
    this.drain(lane);
  }

  private launch(lane: Lane, slot: Slot, run: RunRecord): void {
    slot.running = true;
    this.gauges(lane);
    const p: Promise<void> = this.run(lane, slot, run).finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  /** Sends a claimed run's attempts, records its end, then frees its slot. */
  private async run(lane: Lane, slot: Slot, run: RunRecord): Promise<void> {
    const job = lane.job;
    let previous = this.lastSuccess.get(lane.key) ?? (this.successesKnown ? null : undefined);
    if (previous === undefined) {
      previous = await this.deps.store.lastSuccess(job.app, job.job.name).catch(() => null);
      this.lastSuccess.set(lane.key, previous);
    }
    const { clock, transport } = this.deps;
    const secrets = this.deps.secretsFor(job);
    this.metrics.dispatchLag((clock.now() - run.scheduledTime) / 1000);
    this.events.emit('run-started', run);
    this.notifications?.runStarted(job, run);
    const guard = withLeadership(
      this.deps.guardFor?.(job, run.runKey, slot.controller.signal),
      this.deps.leader,
    );
    const command = job.job.command !== undefined ? this.commandOf(job, run) : undefined;
    const end: EndPatch =
      secrets.length === 0 && job.job.command === undefined
        ? { outcome: 'internal_error', endedAt: clock.now(), error: 'no secret resolved' }
        : await execute(job, run, {
            clock,
            transport,
            secrets,
            previousSuccessMs: previous,
            ...(this.deps.leader ? { leaderEpoch: this.deps.leader.epoch } : {}),
            signal: slot.controller.signal,
            stopReason: () => slot.stopReason,
            ...(guard ?? {}),
            ...(command ? { command } : {}),
          });
    const [res] = await this.ledger.submit([{ kind: 'end', id: run.id, patch: end }], false);
    const ended: RunRecord = res?.kind === 'ended' ? res.run : { ...run, ...end, phase: 'ended' };
    if (ended.outcome === 'success') this.lastSuccess.set(lane.key, ended.endedAt);
    this.releaseSlot(lane, run.id); // release after record
    this.ended(lane, ended);
  }

  /** What a command run needs; each attempt's process is recorded, to be stopped after a crash. */
  private commandOf(job: RegisteredJob, run: RunRecord): ExecuteCommand | undefined {
    const commands = this.deps.commands;
    if (!commands) return undefined;
    return {
      ...commands,
      secretEnv: this.deps.envSecretsFor?.(job) ?? {},
      onSpawn: (p) =>
        void this.ledger.submit([
          { kind: 'process', id: run.id, pid: p.pid, startTime: p.startTime },
        ]),
    };
  }

  private ended(lane: Lane | null, run: RunRecord): void {
    const key = lane?.key ?? jobKey(run.app, run.job);
    this.metrics.runEnded(key, run);
    this.events.emit('run-ended', run);
    this.notifications?.runEnded(lane?.job ?? this.registry.get(key), run);
  }

  notifyEnded(run: RunRecord): void {
    this.notifications?.runEnded(this.registry.get(jobKey(run.app, run.job)), run);
  }

  /**
   * The ledger's last success of every job that has one (read at start-up): a job absent from it
   * never succeeded, so runs need not ask the store (100,000 jobs were 100,000 `null` entries).
   */
  knownSuccesses(byJob: Map<string, number>): void {
    for (const [key, at] of byJob) this.lastSuccess.set(key, at);
    this.successesKnown = true;
  }

  gauges(lane: Lane): void {
    this.metrics.activeRuns(lane.key, lane.running);
    this.metrics.queueDepth(lane.key, lane.queued);
  }
}

/**
 * Puts the leader's check in front of a run's guard: no attempt starts once
 * this replica may no longer be the leader (SPEC §10).
 */
function withLeadership(
  inner: RunGuard | undefined,
  leader: SchedulerDeps['leader'],
): Partial<RunGuard> | undefined {
  if (!leader) return inner;
  return {
    ...inner,
    guard: {
      async acquire(attempt) {
        const why = leader.mayAttempt();
        if (why !== null) return { ok: false, outcome: 'stopped', message: why };
        return inner ? inner.guard.acquire(attempt) : { ok: true, release: async () => undefined };
      },
    },
  };
}

/** Fires due within this are planned ahead: their rows recorded before their instant. */
export const PLAN_AHEAD_MS = 1500;

/** Planned runs launched per turn of the event loop when many are due at once. */
export const LAUNCH_SLICE = 100;

/** A fire that comes due later than this went through downtime (SPEC §9 item 5). */
export const LATE_MS = 60_000;

function admissionName(decision: Decision | null, run: RunRecord): AdmissionName {
  if (run.outcome === 'duplicate') return 'skipped';
  switch (decision?.kind) {
    case 'start':
    case 'replace':
      return 'started';
    case 'queue':
      return 'queued';
    case 'queue_full':
      return 'queue_full';
    default:
      return 'skipped';
  }
}

/** Resolves with the promise's settlement, or 'timeout' after `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), ms);
    timer.unref();
  });
  try {
    return await Promise.race([
      p.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
