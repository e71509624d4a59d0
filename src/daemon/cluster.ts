/**
 * One replica of a high-availability cluster (SPEC §10). Every replica loads
 * the same manifests and serves the API; the one holding the lease leads:
 * it runs a `Scheduler` on a store fenced by its epoch, for one term.
 *
 * - **Lease.** Every TTL/3 a standby tries to take the lease and a leader
 *   renews it (one statement, database clock). A leader that has not renewed
 *   for TTL − TTL/3 (measured from when its last good renewal was sent) stops
 *   starting attempts and ends its term, before the lease can have expired.
 * - **Fencing.** Every write of a term checks its epoch in the same
 *   transaction; a refused write ends the term at once. Every attempt carries
 *   `X-Cron-Leader-Epoch`.
 * - **Failover.** A new leader's scheduler ends the old one's `running` runs
 *   `crashed` and catches up from the checkpoints. SIGTERM releases the lease
 *   and wakes the standbys (LISTEN/NOTIFY), so one leads within a second.
 * - **Skew.** Each replica compares its clock with the database's every minute
 *   and does not take the lease while they differ by more than 2 s.
 * - **Verbs on a standby** are written to the store for the leader (commands),
 *   which carries them out and answers through the store.
 * - **Live views on a standby.** The leader announces the runs it records,
 *   starts and ends, the notifications it records or delivers and the jobs it
 *   pauses (NOTIFY, at most one message per {@link LIVE_BATCH_MS}, listing up
 *   to {@link LIVE_MAX_RUNS} ids, else "many"); a standby reads them back from
 *   the store and puts them in its event stream (`replica-run`,
 *   `replica-notification`), or tells its clients to reload
 *   (`replica-reset`). Best effort: a lost message costs a live update, never
 *   a run.
 */
import type pg from 'pg';
import type { Manifest } from '../contract/manifest/types.js';
import { nextFire } from '../contract/schedule/index.js';
import type { Clock } from '../fire/types.js';
import type { ClusterView, DaemonControl } from './control.js';
import { SchedulerError, type TriggerResult } from './core.js';
import type { DaemonEmitter } from './events.js';
import type { DaemonMetrics } from './metrics.js';
import { buildRegistry, jobKey, type RegisteredJob } from './registry.js';
import type { Scheduler } from './scheduler.js';
import { createClient, explainPgError } from './store/pg/connect.js';
import * as lease from './store/pg/lease.js';
import type { PostgresStore } from './store/postgres.js';
import type { RunRecord, Store } from './store/types.js';

/** Largest clock difference with the database at which a replica may take the lease. */
export const MAX_SKEW_MS = 2000;
/** How long a standby waits for the leader to carry out a forwarded verb. */
export const FORWARD_TIMEOUT_MS = 5000;
/** A forwarded verb older than this is not carried out (its caller has given up). */
export const COMMAND_MAX_AGE_MS = 10_000;
/** The leader gathers run changes this long before it announces them to the standbys. */
export const LIVE_BATCH_MS = 100;
/** Most runs (and notifications) one announcement lists; a busier batch is "many" (reload). */
export const LIVE_MAX_RUNS = 100;
/** "many" is announced at most this often: each one makes every standby client reload. */
export const LIVE_MANY_MS = 1000;

/** What the leader announces to the standbys' live views (the NOTIFY payload after `live:`). */
type LiveMessage =
  | { runs: string[]; notifications: string[] }
  | { many: true }
  | { job: { app: string; job: string; paused: boolean } };

/** What a replica needs. */
export interface ClusterDeps {
  /** The unfenced store (owner of the pool). */
  store: PostgresStore;
  replicaId: string;
  /** Lease time-to-live (`--lease-seconds`, default 15 s). */
  leaseMs: number;
  clock: Clock;
  events: DaemonEmitter;
  metrics: DaemonMetrics;
  /** A scheduler for one term: its store is fenced by the epoch; `leader` goes into its deps. */
  schedulerFor(store: Store, leader: { epoch: number; mayAttempt(): string | null }): Scheduler;
}

type Verb =
  | { kind: 'trigger'; app: string; job: string; when: { at?: number; afterSeconds?: number } }
  | { kind: 'cancel'; runId: string }
  | { kind: 'replay'; runId: string }
  | { kind: 'pause'; app: string; job: string; paused: boolean };

type VerbResult = { ok: unknown } | { error: { code: SchedulerError['code']; message: string } };

/** One replica. `start(manifests)`, then `stop()`. */
export class Cluster implements DaemonControl {
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  private role: 'leader' | 'standby' = 'standby';
  private term: { epoch: number; store: PostgresStore; scheduler: Scheduler } | null = null;
  private validUntil = 0; // performance.now() after which this replica may no longer lead
  private manifests: readonly Manifest[] = [];
  private registry = new Map<string, RegisteredJob>();
  private paused = new Set<string>();
  private counts = new Map<string, { running: number; queued: number }>();
  private skewMs = 0;
  private lastSkewCheck = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private turn: Promise<void> = Promise.resolve();
  private listener: pg.Client | null = null;
  private readonly waiting = new Map<number, () => void>();
  private stopping = false;
  /** The current term's scheduler has finished its start-up (recovery, catch-up). */
  private ready = false;
  private readonly channel: string;
  /** Runs changed since the last announcement (leader); null once more than can be listed. */
  private liveRuns: Set<string> | null = new Set();
  /** Notifications changed since the last announcement (leader), as for runs. */
  private liveNotes: Set<string> | null = new Set();
  private liveTimer: NodeJS.Timeout | undefined;
  private lastMany = -Infinity;
  /** Announcements a standby is reading back, one after another. */
  private liveTurn: Promise<void> = Promise.resolve();

  constructor(private readonly deps: ClusterDeps) {
    this.events = deps.events;
    this.metrics = deps.metrics;
    this.channel = lease.channelOf(deps.store.target.schema);
    const changed = (run: RunRecord): void => this.changed('run', run.id);
    deps.events.on('run-recorded', changed);
    deps.events.on('run-started', changed);
    deps.events.on('run-ended', changed);
    deps.events.on('notification', (n) => this.changed('notification', n.id));
    deps.events.on('job-paused', (job) => {
      if (this.role === 'leader') this.announce({ job });
    });
  }

  // ---- life cycle ----

  /** Loads the manifests, migrates, and starts taking part (standby first). */
  async start(manifests: readonly Manifest[]): Promise<void> {
    await this.deps.store.migrate();
    this.setManifests(manifests);
    await this.listen();
    this.metrics.role(false, null);
    this.schedule(0);
  }

  /** New manifests for this replica (SIGHUP); the leader's scheduler reloads them. */
  async reload(manifests: readonly Manifest[]): Promise<void> {
    this.setManifests(manifests);
    await this.term?.scheduler.reload(manifests);
  }

  /** Leaves the cluster: a leader lets its runs finish (up to `graceMs`) and releases the lease. */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.turn;
    const term = this.term;
    if (term) {
      await term.scheduler.stop(graceMs);
      this.flushLive();
      this.endTerm('stopping');
      await lease
        .releaseLease(this.deps.store.pool, this.deps.replicaId, term.epoch)
        .catch(() => false);
      await lease.notify(this.deps.store.pool, this.channel, 'released').catch(() => undefined);
    }
    await lease
      .touchReplica(this.deps.store.pool, this.deps.replicaId, 'standby')
      .catch(() => undefined);
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => undefined);
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /** True while this replica leads. */
  get leading(): boolean {
    return this.role === 'leader';
  }

  /** The current term's epoch, or null. */
  get epoch(): number | null {
    return this.term?.epoch ?? null;
  }

  private setManifests(manifests: readonly Manifest[]): void {
    this.manifests = manifests;
    this.registry = buildRegistry(manifests);
  }

  // ---- the lease loop ----

  private schedule(ms: number): void {
    if (this.stopping) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.turn = this.turn
        .then(() => this.tick())
        .catch((err: Error) => {
          this.events.emit('warning', { msg: 'cluster turn failed', err: err.message });
        });
    }, ms);
  }

  private async tick(): Promise<void> {
    if (this.stopping) return;
    const { store, replicaId, leaseMs } = this.deps;
    try {
      const now = performance.now();
      if (now - this.lastSkewCheck >= 60_000) {
        this.skewMs = await lease.measureSkew(store.pool, () => Date.now());
        this.lastSkewCheck = now;
        this.metrics.skew(this.skewMs / 1000);
      }
      if (this.role === 'standby' && Math.abs(this.skewMs) > MAX_SKEW_MS) {
        this.events.emit('warning', {
          msg: `not taking the lease: this clock is ${Math.round(-this.skewMs)} ms off the database's (more than ${MAX_SKEW_MS} ms)`,
        });
      } else {
        let sent = performance.now();
        let got: lease.LeaseRow | null;
        try {
          got = await lease.acquireLease(store.pool, replicaId, leaseMs);
        } catch {
          // a pooled connection broken by a database restart fails once: retry on a fresh one
          sent = performance.now();
          got = await lease.acquireLease(store.pool, replicaId, leaseMs);
        }
        if (got) this.metrics.epochSeen(got.epoch);
        if (!got) {
          if (this.role === 'leader') this.endTerm('another replica holds the lease');
        } else if (this.term && this.term.epoch === got.epoch) {
          this.renewed(sent);
        } else {
          if (this.term) this.endTerm(`the lease moved to epoch ${got.epoch}`);
          this.renewed(sent);
          // not awaited: recovery and catch-up may take a while, and renewals must go on
          void this.beginTerm(got.epoch);
        }
      }
      await lease.touchReplica(store.pool, replicaId, this.role);
      if (this.role === 'leader' && this.ready) await this.runCommands();
      else await this.refreshViews();
    } catch (err) {
      this.events.emit('store-error', {
        op: 'lease',
        err: explainPgError(err, store.target),
        retryInMs: leaseMs / 3,
      });
    } finally {
      this.schedule(this.deps.leaseMs / 3);
    }
  }

  /** A renewal sent at `sentAt` succeeded: the term is good until TTL − TTL/3 after it. */
  private renewed(sentAt: number): void {
    const { leaseMs } = this.deps;
    this.validUntil = sentAt + leaseMs - leaseMs / 3;
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(
      () => {
        if (this.role === 'leader' && performance.now() >= this.validUntil)
          this.endTerm('the lease could not be renewed in time');
      },
      Math.max(0, this.validUntil - performance.now()) + 1,
    );
    this.watchdog.unref();
  }

  private async beginTerm(epoch: number): Promise<void> {
    const fenced = this.deps.store.fenced({ holder: this.deps.replicaId, epoch });
    const scheduler = this.deps.schedulerFor(fenced, {
      epoch,
      mayAttempt: () =>
        this.term?.epoch === epoch && performance.now() < this.validUntil
          ? null
          : `no longer the leader of epoch ${epoch}`,
    });
    this.term = { epoch, store: fenced, scheduler };
    this.role = 'leader';
    this.metrics.role(true, epoch);
    this.events.emit('info', { msg: `leading at epoch ${epoch}` });
    const onFenced = (): void => this.endTerm('a write was refused for a stale epoch');
    scheduler.events.on('fenced', onFenced);
    try {
      await scheduler.start(this.manifests);
      if (this.term?.scheduler === scheduler) this.ready = true;
    } catch (err) {
      this.events.emit('warning', {
        msg: `could not start leading at epoch ${epoch}`,
        err: (err as Error).message,
      });
      this.endTerm('start-up failed');
    }
  }

  /** Stops leading now: no write of this term goes through any more, runs are aborted. */
  private endTerm(reason: string): void {
    const term = this.term;
    if (!term) return;
    this.term = null;
    this.ready = false;
    this.role = 'standby';
    this.validUntil = 0;
    clearTimeout(this.watchdog);
    term.store.revoke();
    this.metrics.role(false, null);
    this.events.emit('warning', { msg: `stepped down from epoch ${term.epoch}: ${reason}` });
    void term.scheduler.stop(0);
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
    const pool = this.deps.store.pool;
    const l = await lease.readLease(pool);
    const replicas = await lease.listReplicas(pool, 3 * this.deps.leaseMs);
    return {
      self: { replica: this.deps.replicaId, role: this.role },
      leader:
        l && l.expiresAt > l.dbNow
          ? { replica: l.holder, epoch: l.epoch, leaseExpiresAt: l.expiresAt }
          : null,
      replicas,
    };
  }

  /** A standby's view of paused jobs and run counts, from the store (≤ TTL/3 old). */
  private async refreshViews(): Promise<void> {
    this.paused = await this.deps.store.pausedJobs();
    const { rows } = await this.deps.store.pool.query<{
      app: string;
      job: string;
      phase: string;
      n: number;
    }>(
      `SELECT app, job, phase, COUNT(*) AS n FROM runs WHERE phase IN ('queued', 'running')
       GROUP BY app, job, phase`,
    );
    const counts = new Map<string, { running: number; queued: number }>();
    for (const r of rows) {
      const c = counts.get(jobKey(r.app, r.job)) ?? { running: 0, queued: 0 };
      if (r.phase === 'running') c.running = r.n;
      else c.queued = r.n;
      counts.set(jobKey(r.app, r.job), c);
    }
    this.counts = counts;
  }

  // ---- verbs: carried out by the leader, forwarded by a standby ----

  trigger(
    app: string,
    job: string,
    when: { at?: number; afterSeconds?: number } = {},
  ): Promise<TriggerResult> {
    return this.verb({ kind: 'trigger', app, job, when }) as Promise<TriggerResult>;
  }

  cancel(runId: string): Promise<RunRecord> {
    return this.verb({ kind: 'cancel', runId }) as Promise<RunRecord>;
  }

  replay(runId: string): Promise<TriggerResult> {
    return this.verb({ kind: 'replay', runId }) as Promise<TriggerResult>;
  }

  async setPaused(app: string, job: string, paused: boolean): Promise<void> {
    await this.verb({ kind: 'pause', app, job, paused });
  }

  private async verb(v: Verb): Promise<unknown> {
    const term = this.term;
    if (term) {
      for (let i = 0; i < 100 && !this.ready && this.term === term; i++)
        await new Promise((r) => setTimeout(r, 50)); // the term is still recovering
      if (this.term !== term || !this.ready)
        throw new SchedulerError('unavailable', 'the leader is still starting; try again');
      return carryOut(term.scheduler, v);
    }
    const { pool } = this.deps.store;
    const id = await lease.enqueueCommand(pool, this.channel, v.kind, v);
    const done = new Promise<void>((resolve) => this.waiting.set(id, resolve));
    const deadline = performance.now() + FORWARD_TIMEOUT_MS;
    try {
      for (;;) {
        const result = (await lease.commandResult(pool, id)) as VerbResult | undefined;
        if (result !== undefined) {
          if ('error' in result) throw new SchedulerError(result.error.code, result.error.message);
          return result.ok;
        }
        const left = deadline - performance.now();
        if (left <= 0)
          throw new SchedulerError(
            'unavailable',
            'no leader carried out the request in time; try again (GET /api/v1/cluster shows the leader)',
          );
        // woken by the leader's NOTIFY, or every 250 ms if notifications are lost
        await Promise.race([done, new Promise((r) => setTimeout(r, Math.min(250, left)))]);
      }
    } finally {
      this.waiting.delete(id);
    }
  }

  /** The leader carries out what standbys forwarded. */
  private async runCommands(): Promise<void> {
    const term = this.term;
    if (!term) return;
    const { pool } = this.deps.store;
    for (const c of await lease.pendingCommands(pool)) {
      if (this.term !== term) return;
      const result: VerbResult =
        c.ageMs > COMMAND_MAX_AGE_MS
          ? { error: { code: 'unavailable', message: 'the request waited too long for a leader' } }
          : await carryOut(term.scheduler, c.payload as Verb).then(
              (ok) => ({ ok }),
              (err: Error) => ({
                error: {
                  code: err instanceof SchedulerError ? err.code : 'unavailable',
                  message: err.message,
                },
              }),
            );
      await lease.completeCommand(pool, this.channel, c.id, result);
    }
  }

  // ---- live views ----

  /** Leader: a run or notification changed; it is announced with the others of its batch. */
  private changed(what: 'run' | 'notification', id: string): void {
    if (this.role !== 'leader') return;
    const set = what === 'run' ? this.liveRuns : this.liveNotes;
    if (set !== null) {
      set.add(id);
      if (set.size > LIVE_MAX_RUNS) this.liveRuns = this.liveNotes = null;
    }
    this.liveTimer ??= setTimeout(() => this.flushLive(), LIVE_BATCH_MS).unref();
  }

  /** Leader: announces the batch of run changes gathered so far. */
  private flushLive(): void {
    clearTimeout(this.liveTimer);
    this.liveTimer = undefined;
    const runs = this.liveRuns;
    const notes = this.liveNotes;
    // both are null together: a burst, announced as one "many" per LIVE_MANY_MS (and one after
    // its last change)
    if (runs === null || notes === null) {
      const wait = this.lastMany + LIVE_MANY_MS - performance.now();
      if (wait > 0 && !this.stopping) {
        this.liveTimer = setTimeout(() => this.flushLive(), wait).unref();
        return;
      }
      this.lastMany = performance.now();
      this.announce({ many: true });
    } else if (runs.size + notes.size > 0)
      this.announce({ runs: [...runs], notifications: [...notes] });
    this.liveRuns = new Set();
    this.liveNotes = new Set();
  }

  private announce(message: LiveMessage): void {
    void lease
      .notify(this.deps.store.pool, this.channel, `live:${JSON.stringify(message)}`)
      .catch(() => undefined); // best effort: a lost announcement costs a live update only
  }

  /** Standby: puts what the leader announced into this replica's event stream. */
  private received(payload: string): void {
    let message: LiveMessage;
    try {
      message = JSON.parse(payload) as LiveMessage;
    } catch {
      return;
    }
    this.liveTurn = this.liveTurn
      .then(async () => {
        if ('many' in message) this.events.emit('replica-reset');
        else if ('job' in message) this.events.emit('job-paused', message.job);
        else if ('runs' in message) {
          const store = this.deps.store;
          const [runs, notes] = await Promise.all([
            store.runsByIds(message.runs ?? []),
            store.notificationsByIds(message.notifications ?? []),
          ]).catch(() => [null, null]);
          if (runs === null || notes === null) return void this.events.emit('replica-reset');
          for (const run of runs) this.events.emit('replica-run', { change: changeOf(run), run });
          for (const n of notes) this.events.emit('replica-notification', n);
        }
      })
      .catch(() => undefined); // a failing listener must not stop the announcements after it
  }

  // ---- notifications ----

  private async listen(): Promise<void> {
    if (this.stopping) return;
    const client = createClient(this.deps.store.target);
    client.on('notification', (n) => {
      const payload = n.payload ?? '';
      if (payload === 'released' && this.role === 'standby') this.schedule(0);
      else if (payload.startsWith('command:') && this.role === 'leader') this.schedule(0);
      else if (payload.startsWith('done:')) this.waiting.get(Number(payload.slice(5)))?.();
      else if (payload.startsWith('live:') && this.role === 'standby')
        this.received(payload.slice(5));
    });
    let gone = false;
    const again = (): void => {
      if (gone) return;
      gone = true;
      if (this.listener === client) this.listener = null;
      if (!this.stopping) setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
    };
    client.on('error', again);
    client.on('end', again);
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      this.listener = client;
    } catch {
      again();
      await client.end().catch(() => undefined);
    }
  }
}

/** The change a run read back from the store stands for, by its phase now. */
function changeOf(run: RunRecord): 'recorded' | 'started' | 'ended' {
  if (run.phase === 'ended') return 'ended';
  return run.phase === 'running' ? 'started' : 'recorded';
}

/** Carries out a verb on the leader's scheduler. */
async function carryOut(s: Scheduler, v: Verb): Promise<unknown> {
  switch (v.kind) {
    case 'trigger':
      return s.trigger(v.app, v.job, v.when);
    case 'cancel':
      return s.cancel(v.runId);
    case 'replay':
      return s.replay(v.runId);
    case 'pause':
      await s.setPaused(v.app, v.job, v.paused);
      return { app: v.app, job: v.job, paused: v.paused };
  }
}
