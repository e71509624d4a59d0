/**
 * The daemon's scheduling loop (SPEC §7): one timer on the earliest due fire
 * (a min-heap of all jobs' next fires, never one timer per job), capped at
 * 30 s and watched for drift; every fire gets its run key and a durable
 * ledger row before it is dispatched; overlap, catch-up, jitter, pause,
 * manual and delayed triggers, cancel and replay.
 */
import type { Manifest } from '../contract/manifest/types.js';
import { runKey as makeRunKey } from '../contract/run.js';
import { nextFire } from '../contract/schedule/index.js';
import { uuidv7 } from '../fire/ids.js';
import type { Clock, Transport } from '../fire/types.js';
import { Dispatcher } from './dispatcher.js';
import { DaemonEmitter } from './events.js';
import { MinHeap } from './heap.js';
import { DaemonMetrics } from './metrics.js';
import { admit, jitterMs, selectCatchup, type Admission } from './policy.js';
import { buildRegistry, jobKey, type RegisteredJob } from './registry.js';
import type { NewRun, RunRecord, Store } from './store/types.js';

/** Longest single sleep of the loop (croner's habit): clock jumps are noticed within it. */
export const MAX_SLEEP_MS = 30_000;
/** Fires recorded per ledger transaction before their requests are sent (after the first chunk). */
export const RECORD_CHUNK = 2000;
/** Size of a tick's first recorded chunk. */
export const FIRST_CHUNK = 200;
/** Most missed fires of one schedule examined at start-up (older ones are counted, not listed). */
export const MAX_MISSED_PER_SCHEDULE = 10_000;

type HeapItem =
  | { at: number; kind: 'fire'; key: string; index: number; nominal: number; generation: number }
  | { at: number; kind: 'delayed'; runId: string; key: string };

/** Dependencies of the scheduler. */
export interface SchedulerDeps {
  store: Store;
  clock: Clock;
  transport: Transport;
  /** Resolved secret values of a job; the first signs. */
  secretsFor(job: RegisteredJob): string[];
  /** Uniform [0, 1) for random jitter (injected for tests). */
  random?: () => number;
  /** Ended runs older than this are deleted (checked hourly); undefined = keep forever. */
  retentionMs?: number;
}

/** How often retention runs. */
export const PRUNE_EVERY_MS = 3_600_000;

/** Result of a manual trigger. */
export interface TriggerResult {
  run: RunRecord;
  admission: 'started' | 'queued' | 'skipped' | 'queue_full' | 'scheduled';
}

/** A user-facing problem with a trigger/cancel/replay request. */
export class SchedulerError extends Error {
  constructor(
    readonly code: 'not_found' | 'conflict',
    message: string,
  ) {
    super(message);
  }
}

const ADMISSION_NAME: Record<Admission, TriggerResult['admission']> = {
  start: 'started',
  replace: 'started',
  skip: 'skipped',
  queue: 'queued',
  queue_full: 'queue_full',
};

/** The scheduler. Create, `start(manifests)`, then `stop()`. */
export class Scheduler {
  readonly events = new DaemonEmitter();
  readonly metrics: DaemonMetrics;
  private registry = new Map<string, RegisteredJob>();
  private readonly heap = new MinHeap<HeapItem>();
  private readonly delayed = new Map<string, RunRecord>();
  private paused = new Set<string>();
  private readonly dispatcher: Dispatcher;
  private generation = 0;
  private stopping = false;
  private wake = new AbortController();
  private loop: Promise<void> | undefined;
  private lastPrune = -Infinity;

  constructor(private readonly deps: SchedulerDeps) {
    this.metrics = new DaemonMetrics(() => deps.clock.now());
    this.dispatcher = new Dispatcher({ ...deps, events: this.events, metrics: this.metrics });
    this.dispatcher.onSlotFree = (key) => void this.drain(key);
  }

  /** Jobs by `app/job`. */
  jobs(): ReadonlyMap<string, RegisteredJob> {
    return this.registry;
  }

  isPaused(key: string): boolean {
    return this.paused.has(key);
  }

  activeCount(key: string): number {
    return this.dispatcher.activeCount(key);
  }

  queueLength(key: string): number {
    return this.dispatcher.queueLength(key);
  }

  /** The next nominal fire of a job across its schedules, or null. */
  nextFireOf(key: string): number | null {
    const job = this.registry.get(key);
    if (!job || !job.enabled) return null;
    const now = this.deps.clock.now();
    let best: number | null = null;
    job.schedules.forEach((s) => {
      const n = nextFire(s, job.job.timezone, now);
      if (n !== null && (best === null || n < best)) best = n;
    });
    return best;
  }

  /** Recovers crashed runs and queues, catches up, and starts the loop. */
  async start(manifests: readonly Manifest[]): Promise<void> {
    const { store, clock } = this.deps;
    await store.migrate();
    const crashed = await store.endCrashed(clock.now());
    if (crashed > 0)
      this.events.emit('warning', {
        msg: `${crashed} run(s) left running by a crash were ended as crashed`,
      });
    this.paused = new Set(await store.pausedJobs());
    this.registry = buildRegistry(manifests);
    for (const run of await store.queuedRuns()) {
      const key = jobKey(run.app, run.job);
      if (run.dueAt !== null && run.dueAt > clock.now()) {
        this.delayed.set(run.id, run);
        this.heap.push({ at: run.dueAt, kind: 'delayed', runId: run.id, key });
      } else this.dispatcher.enqueue(key, run);
    }
    await this.scheduleAll(true);
    for (const key of this.registry.keys()) await this.drain(key);
    this.events.emit('reloaded', { jobs: this.registry.size });
    this.loop = this.run();
  }

  /** Replaces the manifests; running and queued runs continue. */
  async reload(manifests: readonly Manifest[]): Promise<void> {
    this.registry = buildRegistry(manifests);
    this.heap.removeWhere((item) => item.kind === 'fire');
    await this.scheduleAll(false);
    this.events.emit('reloaded', { jobs: this.registry.size });
    this.poke();
  }

  /** Stops scheduling, lets active runs finish up to `graceMs`, then aborts them; queued runs stay persisted. */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopping = true;
    this.poke();
    await this.loop;
    const idle = this.dispatcher.idle();
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
    if ((await Promise.race([idle.then(() => 'idle' as const), timer])) === 'timeout') {
      this.dispatcher.abortAll();
      await this.dispatcher.idle();
    }
  }

  private poke(): void {
    this.wake.abort();
  }

  /** Pushes every schedule's next fire; at start-up, first catches up on fires missed while down. */
  private async scheduleAll(catchUp: boolean): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    this.generation += 1;
    const checkpoints: { app: string; job: string; scheduleIndex: number; at: number }[] = [];
    const records: NewRun[] = [];
    const catchupRuns: { job: RegisteredJob; index: number; nominal: number }[] = [];
    for (const job of this.registry.values()) {
      for (let index = 0; index < job.schedules.length; index++) {
        const ref = { app: job.app, job: job.job.name, scheduleIndex: index };
        const last = await store.getCheckpoint(ref);
        if (last === null) checkpoints.push({ ...ref, at: now });
        else if (catchUp && job.enabled && !this.paused.has(job.key)) {
          const missed: number[] = [];
          for (
            let t = nextFire(job.schedules[index]!, job.job.timezone, last);
            t !== null && t <= now;
            t = nextFire(job.schedules[index]!, job.job.timezone, t)
          ) {
            missed.push(t);
            if (missed.length >= MAX_MISSED_PER_SCHEDULE) break;
          }
          const chosen = selectCatchup(missed, now, job.catchup);
          for (const t of chosen.missed) {
            records.push(
              this.newRun(job, index, t, 'schedule', {
                phase: 'ended',
                outcome: 'missed',
                endedAt: now,
              }),
            );
            this.metrics.expected(job.key, t);
          }
          for (const t of chosen.run) catchupRuns.push({ job, index, nominal: t });
          if (missed.length > 0)
            checkpoints.push({ ...ref, at: missed[missed.length - 1] as number });
        }
        this.pushNext(job, index, Math.max(now, last ?? now));
      }
    }
    if (records.length > 0) {
      for (const r of await store.insertRuns(records))
        this.metrics.runEnded(jobKey(r.app, r.job), r);
    }
    if (checkpoints.length > 0) await store.setCheckpoints(checkpoints);
    for (const c of catchupRuns) {
      this.metrics.backfilled(c.job.key);
      await this.admitFires([
        { job: c.job, index: c.index, nominal: c.nominal, trigger: 'catchup' },
      ]);
    }
  }

  private pushNext(job: RegisteredJob, index: number, after: number): void {
    const schedule = job.schedules[index]!;
    const nominal = nextFire(schedule, job.job.timezone, after);
    if (nominal === null) return;
    const { stable_seconds, random_seconds } = job.policy.jitter;
    let at = nominal;
    if (stable_seconds > 0 || random_seconds > 0) {
      const following = nextFire(schedule, job.job.timezone, nominal);
      at += jitterMs(
        { app: job.app, job: job.job.name, scheduleIndex: index },
        stable_seconds,
        random_seconds,
        (this.deps.random ?? Math.random)(),
        nominal,
        following,
      );
    }
    this.heap.push({ at, kind: 'fire', key: job.key, index, nominal, generation: this.generation });
  }

  private newRun(
    job: RegisteredJob,
    index: number | null,
    nominal: number,
    trigger: NewRun['trigger'],
    extra: Partial<NewRun> = {},
  ): NewRun {
    const now = this.deps.clock.now();
    const hash = job.hashes[index ?? 0] as string;
    return {
      id: uuidv7(now),
      runKey: makeRunKey(job.app, job.job.name, nominal, hash),
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
      ...extra,
    };
  }

  /** The loop: sleep until the earliest due item (at most 30 s), process everything due. */
  private async run(): Promise<void> {
    const { clock } = this.deps;
    while (!this.stopping) {
      const now = clock.now();
      if (this.deps.retentionMs !== undefined && now - this.lastPrune >= PRUNE_EVERY_MS) {
        this.lastPrune = now;
        const pruned = await this.deps.store.pruneRuns(now - this.deps.retentionMs).catch(() => 0);
        if (pruned > 0)
          this.events.emit('warning', {
            msg: `retention: deleted ${pruned} run(s) that ended before ${new Date(now - this.deps.retentionMs).toISOString()}`,
          });
      }
      const next = this.heap.peek();
      const wait = next ? next.at - now : MAX_SLEEP_MS;
      if (wait > 0) {
        this.wake = new AbortController();
        const sleep = Math.min(wait, MAX_SLEEP_MS);
        const completed = await clock.sleep(sleep, this.wake.signal);
        const woke = clock.now();
        if (completed && Math.abs(woke - (now + sleep)) > 1000) {
          this.events.emit('timer-drift', { expected: now + sleep, actual: woke });
        }
        continue;
      }
      try {
        await this.tick(now);
      } catch (err) {
        this.events.emit('warning', { msg: 'scheduler tick failed', err: (err as Error).message });
        await clock.sleep(1000);
      }
    }
  }

  /** Processes every item due at `now` in one ledger transaction. */
  private async tick(now: number): Promise<void> {
    const fires: { job: RegisteredJob; index: number; nominal: number; trigger: 'schedule' }[] = [];
    const delayedDue: RunRecord[] = [];
    const checkpoints: { app: string; job: string; scheduleIndex: number; at: number }[] = [];
    while ((this.heap.peek()?.at ?? Infinity) <= now) {
      const item = this.heap.pop() as HeapItem;
      if (item.kind === 'delayed') {
        const run = this.delayed.get(item.runId);
        this.delayed.delete(item.runId);
        if (run) delayedDue.push(run);
        continue;
      }
      const job = this.registry.get(item.key);
      if (!job || item.generation !== this.generation) continue;
      this.pushNext(job, item.index, item.nominal);
      checkpoints.push({
        app: job.app,
        job: job.job.name,
        scheduleIndex: item.index,
        at: item.nominal,
      });
      if (!job.enabled || this.paused.has(job.key)) continue;
      this.metrics.expected(job.key, item.nominal);
      fires.push({ job, index: item.index, nominal: item.nominal, trigger: 'schedule' });
    }
    this.events.emit('tick', { now, due: fires.length + delayedDue.length });
    await this.admitFires(fires);
    if (checkpoints.length > 0) await this.deps.store.setCheckpoints(checkpoints);
    for (const run of delayedDue) await this.admitExisting(run);
  }

  /** Records new fires (one transaction) with their admission, then dispatches the started ones. */
  private async admitFires(
    fires: {
      job: RegisteredJob;
      index: number | null;
      nominal: number;
      trigger: NewRun['trigger'];
      runKey?: string;
    }[],
  ): Promise<{ run: RunRecord; admission: Admission }[]> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const planned: { job: RegisteredJob; run: NewRun; admission: Admission }[] = [];
    const starting = new Map<string, number>();
    const queuedAdd = new Map<string, number>();
    const runs = fires.map((f) => {
      const run = this.newRun(f.job, f.index, f.nominal, f.trigger);
      if (f.runKey) run.runKey = f.runKey;
      return run;
    });
    const succeeded = await store.succeededAmong(runs.map((r) => r.runKey));
    for (const [i, f] of fires.entries()) {
      const run = runs[i] as NewRun;
      if (succeeded.has(run.runKey)) {
        Object.assign(run, { phase: 'ended', outcome: 'duplicate', endedAt: now });
        planned.push({ job: f.job, run, admission: 'skip' });
        this.metrics.dispatched(f.job.key, 'duplicate');
        continue;
      }
      const key = f.job.key;
      const active = this.dispatcher.activeCount(key) + (starting.get(key) ?? 0);
      const queued = this.dispatcher.queueLength(key) + (queuedAdd.get(key) ?? 0);
      const admission = admit(f.job.overlap, active, queued);
      this.metrics.dispatched(key, admission);
      if (admission === 'start' || admission === 'replace') {
        Object.assign(run, { phase: 'running', startedAt: now });
        if (admission === 'start') starting.set(key, (starting.get(key) ?? 0) + 1);
      } else if (admission === 'queue') {
        queuedAdd.set(key, (queuedAdd.get(key) ?? 0) + 1);
      } else {
        Object.assign(run, {
          phase: 'ended',
          outcome: admission === 'skip' ? 'skipped' : 'queue_full',
          endedAt: now,
        });
      }
      planned.push({ job: f.job, run, admission });
    }
    const out: { run: RunRecord; admission: Admission }[] = [];
    // record and dispatch in chunks: one fsync per chunk, and the first requests leave
    // before the last rows of a 10,000-fire tick are written
    // a small first chunk gets requests out at once; bigger ones after it cost fewer fsyncs
    for (
      let from = 0, size = FIRST_CHUNK;
      from < planned.length;
      from += size, size = RECORD_CHUNK
    ) {
      const chunk = planned.slice(from, from + size);
      const stored = await store.insertRuns(chunk.map((p) => p.run));
      this.dispatchRecorded(chunk, stored, now, out);
    }
    return out;
  }

  private dispatchRecorded(
    chunk: { job: RegisteredJob; admission: Admission }[],
    stored: RunRecord[],
    now: number,
    out: { run: RunRecord; admission: Admission }[],
  ): void {
    stored.forEach((run, i) => {
      const { job, admission } = chunk[i]!;
      this.events.emit('run-recorded', run);
      out.push({ run, admission });
      if (run.phase === 'ended') {
        this.metrics.runEnded(job.key, run);
        this.events.emit('run-ended', run);
      } else if (run.phase === 'queued') this.dispatcher.enqueue(job.key, run);
      else {
        if (admission === 'replace') this.dispatcher.stopOldest(job.key);
        this.metrics.dispatchLag((now - run.scheduledTime) / 1000);
        this.dispatcher.start(job, run);
      }
    });
  }

  /** Admits a run that already has a row (a delayed manual trigger now due, or a queued one). */
  private async admitExisting(run: RunRecord): Promise<Admission | null> {
    const job = this.registry.get(jobKey(run.app, run.job));
    const now = this.deps.clock.now();
    if (!job) {
      await this.dispatcher.record(run, {
        phase: 'ended',
        outcome: 'internal_error',
        endedAt: now,
      });
      return null;
    }
    const admission = admit(
      job.overlap,
      this.dispatcher.activeCount(job.key),
      this.dispatcher.queueLength(job.key),
    );
    this.metrics.dispatched(job.key, admission);
    if (admission === 'start' || admission === 'replace') {
      if (admission === 'replace') this.dispatcher.stopOldest(job.key);
      const started = { ...run, phase: 'running' as const, startedAt: now, dueAt: null };
      await this.deps.store.updateRuns([
        { id: run.id, patch: { phase: 'running', startedAt: now, dueAt: null } },
      ]);
      this.dispatcher.start(job, started);
    } else if (admission === 'queue') {
      await this.deps.store.updateRuns([{ id: run.id, patch: { dueAt: null } }]);
      this.dispatcher.enqueue(job.key, { ...run, dueAt: null });
    } else {
      const outcome: 'skipped' | 'queue_full' = admission === 'skip' ? 'skipped' : 'queue_full';
      const ended = { ...run, phase: 'ended' as const, outcome, endedAt: now };
      await this.deps.store.updateRuns([
        { id: run.id, patch: { phase: 'ended', outcome, endedAt: now } },
      ]);
      this.metrics.runEnded(job.key, ended);
      this.events.emit('run-ended', ended);
    }
    return admission;
  }

  /** Starts queued runs of a job while there is room (FIFO). */
  private async drain(key: string): Promise<void> {
    const job = this.registry.get(key);
    if (!job || this.stopping) return;
    while (
      this.dispatcher.queueLength(key) > 0 &&
      (job.overlap.concurrency === 'Allow' ||
        this.dispatcher.activeCount(key) < job.overlap.maxConcurrent)
    ) {
      const next = this.dispatcher.queued(key)[0] as RunRecord;
      this.dispatcher.dequeue(key, next.id);
      const now = this.deps.clock.now();
      await this.deps.store.updateRuns([
        { id: next.id, patch: { phase: 'running', startedAt: now } },
      ]);
      this.metrics.dispatchLag((now - next.scheduledTime) / 1000);
      this.dispatcher.start(job, { ...next, phase: 'running', startedAt: now });
    }
  }

  /** A manual trigger now, at an instant, or after a delay; same admission as scheduled fires. */
  async trigger(
    app: string,
    jobName: string,
    when: { at?: number; afterSeconds?: number } = {},
  ): Promise<TriggerResult> {
    const job = this.registry.get(jobKey(app, jobName));
    if (!job) throw new SchedulerError('not_found', `no job ${app}/${jobName}`);
    const now = this.deps.clock.now();
    const at =
      when.at ?? (when.afterSeconds !== undefined ? now + when.afterSeconds * 1000 : undefined);
    if (at !== undefined && at > now) {
      const [run] = await this.deps.store.insertRuns([
        this.newRun(job, null, at, 'manual', { dueAt: at }),
      ]);
      this.delayed.set(run!.id, run!);
      this.heap.push({ at, kind: 'delayed', runId: run!.id, key: job.key });
      this.events.emit('run-recorded', run!);
      this.poke();
      return { run: run!, admission: 'scheduled' };
    }
    const [res] = await this.admitFires([{ job, index: null, nominal: now, trigger: 'manual' }]);
    return {
      run: res!.run,
      admission: res!.run.outcome === 'duplicate' ? 'skipped' : ADMISSION_NAME[res!.admission],
    };
  }

  /** Cancels a queued, delayed or running run. */
  async cancel(runId: string): Promise<RunRecord> {
    const run = await this.deps.store.getRun(runId);
    if (!run) throw new SchedulerError('not_found', `no run ${runId}`);
    const key = jobKey(run.app, run.job);
    if (run.phase === 'ended')
      throw new SchedulerError('conflict', `run ${runId} already ended (${run.outcome})`);
    if (run.phase === 'running') {
      if (!this.dispatcher.abort(key, runId))
        throw new SchedulerError('conflict', `run ${runId} is not running here`);
      return run;
    }
    this.dispatcher.dequeue(key, runId);
    this.delayed.delete(runId);
    const now = this.deps.clock.now();
    const ended = { ...run, phase: 'ended' as const, outcome: 'stopped' as const, endedAt: now };
    await this.deps.store.updateRuns([
      { id: runId, patch: { phase: 'ended', outcome: 'stopped', endedAt: now } },
    ]);
    this.metrics.runEnded(key, ended);
    this.events.emit('run-ended', ended);
    return ended;
  }

  /** A new run for an ended one: same run key, unless it succeeded (then a fresh one). */
  async replay(runId: string): Promise<TriggerResult> {
    const run = await this.deps.store.getRun(runId);
    if (!run) throw new SchedulerError('not_found', `no run ${runId}`);
    if (run.phase !== 'ended') throw new SchedulerError('conflict', `run ${runId} has not ended`);
    const job = this.registry.get(jobKey(run.app, run.job));
    if (!job)
      throw new SchedulerError(
        'not_found',
        `job ${run.app}/${run.job} is no longer in the manifests`,
      );
    const runKey =
      run.outcome === 'success'
        ? `${run.runKey}#replay-${uuidv7(this.deps.clock.now()).slice(-12)}`
        : run.runKey;
    const [res] = await this.admitFires([
      { job, index: run.scheduleIndex, nominal: run.scheduledTime, trigger: 'replay', runKey },
    ]);
    return { run: res!.run, admission: ADMISSION_NAME[res!.admission] };
  }

  /** Pauses or resumes the scheduled fires of a job (manual triggers still work). */
  async setPaused(app: string, jobName: string, paused: boolean): Promise<void> {
    const key = jobKey(app, jobName);
    if (!this.registry.has(key)) throw new SchedulerError('not_found', `no job ${app}/${jobName}`);
    await this.deps.store.setPaused(app, jobName, paused);
    if (paused) this.paused.add(key);
    else this.paused.delete(key);
  }
}
