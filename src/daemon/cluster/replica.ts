/**
 * One replica of a high-availability cluster (SPEC §10): every replica loads
 * the same manifests and serves the API; the one holding the lease leads — it
 * runs a term's scheduler on a store fenced by its epoch. This file composes
 * the rooms and answers the API ({@link DaemonControl}):
 *
 * - `lease-loop.ts`: who leads and until when (lease, incarnations, deadline, skew);
 * - `forward.ts`: the verbs, carried out by the leader, forwarded by a standby;
 * - `live.ts`: the change feed (wake-ups, the standbys' live views);
 * - `term.ts`: what a term's scheduler must do, and what a term tells it.
 *
 * It depends on the {@link Store} and the {@link Coordination} seam and the
 * injected clock only — no database driver, no SQL, no timer of its own.
 * A term: on winning the lease the replica builds a scheduler on the term's
 * fenced store and starts it (recovery of the previous leader's runs, catch-up);
 * the term ends when the lease loop says so, or at once when the store refuses
 * one of its writes for a stale epoch.
 */
import type { Manifest } from '../../contract/manifest/types.js';
import { nextFire } from '../../contract/schedule/index.js';
import type { Clock } from '../../fire/types.js';
import type { ClusterView, DaemonControl, DaemonRole, StoreHealth } from '../control.js';
import { SchedulerError, type TriggerOptions, type TriggerResult } from '../core.js';
import type { DaemonEmitter } from '../events.js';
import type { DaemonMetrics } from '../metrics.js';
import { buildRegistry, jobKey, type RegisteredJob } from '../registry.js';
import type { Coordination, Lease, TermStore } from '../store/coordination.js';
import type { BackfillRecord, BackfillSpec, RunRecord, Store } from '../store/types.js';
import type { FreezeRecord, FreezeSpec, PauseNote } from '../store/freeze-types.js';
import type { SkipRecord } from '../store/skip-types.js';
import type { SkipResult, SkipWhat } from '../verbs.js';
import { carryOut, FORWARD_TIMEOUT_MS, Forwarder, type Verb } from './forward.js';
import { LeaseLoop } from './lease-loop.js';
import { LiveFeed } from './live.js';
import type { LeaderTerm, SchedulerFor, TermScheduler } from './term.js';
import { nap } from './timers.js';
import { standbyServices } from '../services/standby-view.js';
import type { ServiceAction, ServiceActionResult, ServiceView } from '../services/supervisor.js';

export { MAX_SKEW_MS } from './lease-loop.js';

/** What a replica needs. */
export interface ClusterDeps {
  /** The unfenced store: reads, and the store the terms' fenced stores are views of. */
  store: Store;
  /** Lease, replicas, commands and change feed of that store. */
  coordination: Coordination;
  replicaId: string;
  /** Lease time-to-live (`--lease-seconds`, default 15 s). */
  leaseMs: number;
  clock: Clock;
  /** A monotonic ms counter for the term's deadline besides the clock (production: `performance.now`). */
  monotonic?: () => number;
  events: DaemonEmitter;
  metrics: DaemonMetrics;
  /** The scheduler of one term, on the term's fenced store. */
  schedulerFor: SchedulerFor;
  /** A fresh incarnation id (default a random UUID); tests name them. */
  incarnation?: () => string;
}

/** The current term. */
interface Term {
  epoch: number;
  store: TermStore;
  scheduler: TermScheduler;
  /** Resolves true once its scheduler started, false if it ended first. */
  started: Promise<boolean>;
  ready: boolean;
  settle(ok: boolean): void;
}

/** One replica. `start(manifests)`, then `stop()`. */
export class Cluster implements DaemonControl {
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  private readonly loop: LeaseLoop;
  private readonly forwarder: Forwarder;
  private readonly live: LiveFeed;
  private term: Term | null = null;
  private manifests: readonly Manifest[] = [];
  private registry = new Map<string, RegisteredJob>();
  /** A standby's view of the leader's jobs (≤ TTL/3 old). */
  private paused = new Set<string>();
  private notes = new Map<string, PauseNote>();
  private skips = new Map<string, SkipRecord[]>();
  private counts = new Map<string, { running: number; queued: number }>();
  private stopping = false;

  constructor(private readonly deps: ClusterDeps) {
    this.events = deps.events;
    this.metrics = deps.metrics;
    this.loop = new LeaseLoop(deps, {
      began: (lease) => void this.beginTerm(lease),
      ended: (epoch, reason) => this.endTerm(epoch, reason),
      chores: (leading) => this.chores(leading),
    });
    this.forwarder = new Forwarder(deps);
    this.live = new LiveFeed({
      coordination: deps.coordination,
      store: deps.store,
      clock: deps.clock,
      events: deps.events,
      leading: () => this.term !== null,
      onWake: (m) => {
        if (m.kind === 'released' && !this.term) this.loop.wake();
        else if (m.kind === 'command') this.runCommands();
        else if (m.kind === 'done') this.forwarder.done(m.id);
      },
    });
    const changed = (run: RunRecord): void => this.live.changed('run', run.id);
    deps.events.on('run-recorded', changed);
    deps.events.on('run-started', changed);
    deps.events.on('run-ended', changed);
    deps.events.on('notification', (n) => this.live.changed('notification', n.id));
    deps.events.on('job-paused', (job) => {
      if (this.term) this.live.announce({ job });
    });
  }

  // ---- life cycle ----

  /** Loads the manifests, subscribes to the feed, and starts taking part (standby first). */
  async start(manifests: readonly Manifest[]): Promise<void> {
    await this.deps.store.migrate();
    this.setManifests(manifests);
    await this.live.start();
    this.metrics.role(false, null);
    this.loop.start();
  }

  /** New manifests for this replica (SIGHUP); the leader's scheduler reloads them. */
  async reload(manifests: readonly Manifest[]): Promise<void> {
    this.setManifests(manifests);
    await this.term?.scheduler.reload(manifests);
  }

  /**
   * Leaves the cluster: a leader stops scheduling and lets its runs finish (up to
   * `graceMs`) while it still renews the lease, then releases it, so a standby
   * leads at once.
   */
  async stop(graceMs = 30_000): Promise<{ unflushed: number }> {
    this.stopping = true;
    this.loop.retire();
    const term = this.term;
    const stopped = term ? await term.scheduler.stop(graceMs) : undefined;
    const unflushed = (stopped as { unflushed?: number } | undefined)?.unflushed ?? 0;
    await this.loop.stop();
    this.live.flush(true);
    await this.loop.leave();
    await this.deps.coordination
      .touchReplica(this.deps.replicaId, 'standby')
      .catch(() => undefined);
    await this.live.stop();
    return { unflushed };
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /** True while this replica leads. */
  get leading(): boolean {
    return this.term !== null;
  }

  /** The current term's epoch, or null. */
  get epoch(): number | null {
    return this.term?.epoch ?? null;
  }

  role(): Exclude<DaemonRole, 'single'> {
    return this.term ? 'leader' : 'standby';
  }

  /** The leading term's ledger writes; a standby writes none of its own (null). */
  storeHealth(): StoreHealth {
    return this.term?.scheduler.storeHealth?.() ?? null;
  }

  private setManifests(manifests: readonly Manifest[]): void {
    this.manifests = manifests;
    this.registry = buildRegistry(manifests);
  }

  // ---- terms ----

  private async beginTerm(lease: Lease): Promise<void> {
    const { epoch } = lease;
    const store = this.deps.coordination.termStore({ holder: this.deps.replicaId, epoch });
    const gap =
      lease.previousExpiresAt !== null && lease.acquiredAt > lease.previousExpiresAt
        ? { from: lease.previousExpiresAt, to: lease.acquiredAt }
        : undefined;
    const leader: LeaderTerm = {
      epoch,
      mayAttempt: () => this.loop.mayAttempt(epoch),
      ...(gap ? { gap } : {}),
    };
    const scheduler = this.deps.schedulerFor(store, leader);
    let settle: (ok: boolean) => void = () => undefined;
    const started = new Promise<boolean>((resolve) => (settle = resolve));
    const term: Term = { epoch, store, scheduler, started, ready: false, settle };
    this.term = term;
    this.metrics.role(true, epoch);
    this.events.emit('leading', { epoch, ...(gap ? { gap } : {}) });
    void store.refused.then((reason) => this.loop.stepDown(epoch, reason));
    try {
      await scheduler.start(this.manifests);
      if (this.term !== term) return;
      term.ready = true;
      settle(true);
      this.runCommands();
    } catch (err) {
      this.events.emit('warning', {
        msg: `could not start leading at epoch ${epoch}`,
        err: (err as Error).message,
      });
      this.loop.stepDown(epoch, 'start-up failed');
    }
  }

  /** Term `epoch` is over: no write of it goes through any more, its runs are aborted. */
  private endTerm(epoch: number, reason: string): void {
    const term = this.term;
    if (!term || term.epoch !== epoch) return;
    this.term = null;
    term.settle(false);
    term.store.revoke();
    this.metrics.role(false, null);
    this.events.emit('stepped-down', { epoch, reason });
    void term.scheduler.stop(0);
  }

  /** After the lease, every turn: the leader's commands and pruning, or a standby's views. */
  private async chores(leading: boolean): Promise<void> {
    if (leading) {
      this.runCommands();
      await this.forwarder.maybePrune();
    } else await this.refreshViews();
  }

  /** Leader with a started term: carries out what standbys forwarded. */
  private runCommands(): void {
    const term = this.term;
    if (!term?.ready) return;
    void this.forwarder.runPending({
      fence: { holder: this.deps.replicaId, epoch: term.epoch },
      scheduler: term.scheduler,
      current: () => this.term === term,
    });
  }

  // ---- views ----

  now(): number {
    return this.deps.clock.now();
  }

  jobs(): ReadonlyMap<string, RegisteredJob> {
    return this.registry;
  }

  nextFireOf(key: string): number | null {
    const job = this.registry.get(key);
    if (!job || !job.enabled) return null;
    let best: number | null = null;
    for (const s of job.schedules) {
      const n = nextFire(s, job.job.timezone, this.deps.clock.now());
      if (n !== null && (best === null || n < best)) best = n;
    }
    return best;
  }

  isPaused(key: string): boolean {
    return this.term ? this.term.scheduler.isPaused(key) : this.paused.has(key);
  }

  activeCount(key: string): number {
    return this.term ? this.term.scheduler.activeCount(key) : (this.counts.get(key)?.running ?? 0);
  }

  queueLength(key: string): number {
    return this.term ? this.term.scheduler.queueLength(key) : (this.counts.get(key)?.queued ?? 0);
  }

  async cluster(): Promise<ClusterView> {
    const { coordination, leaseMs, replicaId } = this.deps;
    const lease = await coordination.readLease();
    const replicas = await coordination.listReplicas(3 * leaseMs);
    return {
      self: { replica: replicaId, role: this.role() },
      leader:
        lease && lease.expiresAt > lease.storeNow
          ? { replica: lease.replica, epoch: lease.epoch, leaseExpiresAt: lease.expiresAt }
          : null,
      replicas,
    };
  }

  /** A standby's view of paused jobs and run counts, from the store. */
  private async refreshViews(): Promise<void> {
    const { store } = this.deps;
    const [paused, active, notes, skips] = await Promise.all([
      store.pausedJobs(),
      store.activeCounts(),
      store.pauseNotes(),
      store.skips(),
    ]);
    this.paused = paused;
    this.notes = notes;
    this.skips = new Map();
    for (const s of skips) {
      const key = jobKey(s.app, s.job);
      this.skips.set(key, [...(this.skips.get(key) ?? []), s]);
    }
    this.counts = new Map(active.map((a) => [jobKey(a.app, a.job), a]));
  }

  // ---- verbs: carried out by the leader, forwarded by a standby ----

  trigger(
    app: string,
    job: string,
    when: { at?: number; afterSeconds?: number } = {},
    opts: TriggerOptions = {},
  ): Promise<TriggerResult> {
    return this.verb({
      kind: 'trigger',
      app,
      job,
      when,
      ...(Object.keys(opts).length > 0 ? { opts } : {}),
    }) as Promise<TriggerResult>;
  }

  cancel(runId: string): Promise<RunRecord> {
    return this.verb({ kind: 'cancel', runId }) as Promise<RunRecord>;
  }

  replay(runId: string): Promise<TriggerResult> {
    return this.verb({ kind: 'replay', runId }) as Promise<TriggerResult>;
  }

  async setPaused(
    app: string,
    job: string,
    paused: boolean,
    note?: { reason: string | null; by: string },
  ): Promise<void> {
    await this.verb({ kind: 'pause', app, job, paused, ...(note ? { note } : {}) });
  }

  waitingFor(runId: string): string | null {
    return this.term?.scheduler.waitingFor?.(runId) ?? null;
  }

  pauseNote(key: string): PauseNote | null {
    return this.term
      ? (this.term.scheduler.pauseNote?.(key) ?? null)
      : (this.notes.get(key) ?? null);
  }

  skip(app: string, job: string, what: SkipWhat, by: string): Promise<SkipResult> {
    return this.verb({ kind: 'skip', app, job, what, by }) as Promise<SkipResult>;
  }

  /** A job's pending skips: the leader's, or the store's (a standby; those to come). */
  skipsOf(key: string): SkipRecord[] {
    if (this.term) return this.term.scheduler.skipsOf?.(key) ?? [];
    const now = this.deps.clock.now();
    return (this.skips.get(key) ?? []).filter((s) => s.at > now);
  }

  freeze(spec: FreezeSpec, by: string): Promise<FreezeRecord> {
    return this.verb({ kind: 'freeze', spec, by }) as Promise<FreezeRecord>;
  }

  unfreeze(app: string | null, job: string | null, by: string): Promise<FreezeRecord> {
    return this.verb({ kind: 'unfreeze', app, job, by }) as Promise<FreezeRecord>;
  }

  /** The freezes in force: the leader's, or the store's (a standby). */
  freezeList(): Promise<FreezeRecord[]> {
    const now = this.deps.clock.now();
    return this.deps.store
      .freezes()
      .then((all) => all.filter((f) => f.until === null || f.until > now));
  }

  backfill(spec: BackfillSpec, by: string): Promise<BackfillRecord> {
    return this.verb({ kind: 'backfill', spec, by }) as Promise<BackfillRecord>;
  }

  cancelBackfill(id: string, by: string): Promise<BackfillRecord> {
    return this.verb({ kind: 'backfill-cancel', id, by }) as Promise<BackfillRecord>;
  }

  // ---- services (SPEC §17): only the leader runs them ----

  async serviceViews(): Promise<ServiceView[]> {
    const term = this.term;
    if (term?.ready && term.scheduler.serviceViews) return term.scheduler.serviceViews();
    return standbyServices(this.manifests, await this.deps.store.runningRuns());
  }

  serviceAction(
    action: ServiceAction,
    app: string,
    service: string,
    instance?: number,
  ): Promise<ServiceActionResult[]> {
    return this.verb({
      kind: 'service',
      action,
      app,
      service,
      ...(instance !== undefined ? { instance } : {}),
    }) as Promise<ServiceActionResult[]>;
  }

  private async verb(v: Verb): Promise<unknown> {
    const term = this.term;
    if (!term) return this.forwarder.forward(v);
    // the term is still recovering: wait for its start, within the forwarding bound
    if (!term.ready) await nap(this.deps.clock, FORWARD_TIMEOUT_MS, term.started);
    if (this.term !== term || !term.ready)
      throw new SchedulerError('unavailable', 'the leader is still starting; try again');
    return carryOut(term.scheduler, v);
  }
}
