/**
 * Runs admitted runs through the shared per-fire engine, tracks active runs
 * and the Enqueue FIFO queues per job, and records each run's end. Ledger
 * end-of-run updates are group-committed (one durable transaction per few
 * milliseconds) so 10,000 runs ending together cost one fsync, not 10,000.
 */
import { runFire } from '../fire/engine.js';
import type { Clock, Transport } from '../fire/types.js';
import type { DaemonEmitter } from './events.js';
import type { DaemonMetrics } from './metrics.js';
import { ledgerOutcome } from './policy.js';
import type { RegisteredJob } from './registry.js';
import type { RunPatch, RunRecord, Store } from './store/types.js';

/**
 * How long run-end updates wait to be committed together. One fsync per window instead of one
 * per run; a crash inside the window leaves those runs `running`, and they are ended `crashed`
 * at the next start.
 */
export const GROUP_COMMIT_MS = 25;

/** One active run. */
interface Active {
  run: RunRecord;
  controller: AbortController;
}

/** Dependencies of the dispatcher. */
export interface DispatcherDeps {
  store: Store;
  clock: Clock;
  transport: Transport;
  events: DaemonEmitter;
  metrics: DaemonMetrics;
  /** Resolved secret values of a job (first signs); empty → the run fails `internal_error`. */
  secretsFor(job: RegisteredJob): string[];
}

/** Active runs, queues and the write-behind of run ends. */
export class Dispatcher {
  private readonly active = new Map<string, Map<string, Active>>();
  private readonly queues = new Map<string, RunRecord[]>();
  private pending: { id: string; patch: RunPatch }[] = [];
  private scheduled: Promise<void> | undefined;
  private readonly inflight = new Set<Promise<void>>();
  /** Last success per job (`X-Cron-Previous-Success-Time`), read from the store once per job. */
  private readonly lastSuccess = new Map<string, number | null>();

  constructor(private readonly deps: DispatcherDeps) {}

  /** Active runs of a job. */
  activeCount(key: string): number {
    return this.active.get(key)?.size ?? 0;
  }

  /** Queued runs of a job (waiting for a slot). */
  queueLength(key: string): number {
    return this.queues.get(key)?.length ?? 0;
  }

  /** Snapshot of the queue of a job. */
  queued(key: string): readonly RunRecord[] {
    return this.queues.get(key) ?? [];
  }

  /** Every active run. */
  activeRuns(): RunRecord[] {
    return [...this.active.values()].flatMap((m) => [...m.values()].map((a) => a.run));
  }

  /** Appends a run to its job's FIFO queue. */
  enqueue(key: string, run: RunRecord): void {
    const q = this.queues.get(key) ?? [];
    q.push(run);
    this.queues.set(key, q);
    this.deps.metrics.queueDepth(key, q.length);
  }

  /** Removes a queued run; returns it when it was queued. */
  dequeue(key: string, runId: string): RunRecord | undefined {
    const q = this.queues.get(key);
    const i = q?.findIndex((r) => r.id === runId) ?? -1;
    if (!q || i < 0) return undefined;
    const [run] = q.splice(i, 1);
    this.deps.metrics.queueDepth(key, q.length);
    return run;
  }

  /** Aborts the oldest active run of a job (Replace); returns it. */
  stopOldest(key: string): RunRecord | undefined {
    const runs = [...(this.active.get(key)?.values() ?? [])].sort((a, b) => a.run.seq - b.run.seq);
    const oldest = runs[0];
    oldest?.controller.abort();
    return oldest?.run;
  }

  /** Aborts an active run by id; true when it was active. */
  abort(key: string, runId: string): boolean {
    const a = this.active.get(key)?.get(runId);
    a?.controller.abort();
    return a !== undefined;
  }

  /** Aborts every active run (shutdown past the grace period). */
  abortAll(): void {
    for (const m of this.active.values()) for (const a of m.values()) a.controller.abort();
  }

  /** Resolves when every active run has ended (and been recorded). */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    await this.scheduled;
  }

  /** Starts a run whose ledger row (phase `running`) is already durable. */
  start(job: RegisteredJob, run: RunRecord): void {
    const controller = new AbortController();
    const runs = this.active.get(job.key) ?? new Map<string, Active>();
    runs.set(run.id, { run, controller });
    this.active.set(job.key, runs);
    this.deps.metrics.activeRuns(job.key, runs.size);
    this.deps.events.emit('run-started', run);
    const p = this.execute(job, run, controller.signal).finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  private async execute(job: RegisteredJob, run: RunRecord, signal: AbortSignal): Promise<void> {
    const { clock, transport } = this.deps;
    const secrets = this.deps.secretsFor(job);
    let patch: RunPatch;
    if (secrets.length === 0) {
      patch = { phase: 'ended', outcome: 'internal_error', endedAt: clock.now() };
      this.deps.events.emit('warning', {
        msg: `${job.key}: no secret resolved; requests must be signed`,
      });
    } else {
      try {
        let lastSuccess = this.lastSuccess.get(job.key);
        if (lastSuccess === undefined) {
          lastSuccess = await this.deps.store.lastSuccess(job.app, job.job.name);
          this.lastSuccess.set(job.key, lastSuccess);
        }
        const result = await runFire(
          {
            app: job.app,
            job: job.job,
            runId: run.id,
            runKey: run.runKey,
            fireTimeMs: run.scheduledTime,
            actualTimeMs: run.startedAt ?? clock.now(),
            secrets,
            previousSuccessMs: lastSuccess,
          },
          { transport, clock, signal },
        );
        patch = {
          phase: 'ended',
          outcome: ledgerOutcome(result.outcome),
          attempts: result.attempts,
          lastStatus: result.lastStatus,
          endedAt: clock.now(),
        };
      } catch (err) {
        // never leave a run active: an unexpected failure ends it, the daemon goes on
        patch = { phase: 'ended', outcome: 'internal_error', endedAt: clock.now() };
        this.deps.events.emit('warning', {
          msg: `${job.key}: run ${run.id} failed`,
          err: (err as Error).message,
        });
      }
    }
    const ended: RunRecord = { ...run, ...patch };
    if (ended.outcome === 'success' && ended.endedAt !== null)
      this.lastSuccess.set(job.key, ended.endedAt);
    const runs = this.active.get(job.key);
    runs?.delete(run.id);
    this.deps.metrics.activeRuns(job.key, runs?.size ?? 0);
    this.deps.metrics.runEnded(job.key, ended);
    await this.record(ended, patch);
    this.deps.events.emit('run-ended', ended);
    this.onSlotFree?.(job.key);
  }

  /** Called when a run of `key` ended, so the scheduler can admit queued runs. */
  onSlotFree: ((key: string) => void) | undefined;

  /** Queues a ledger update for the next group commit; resolves once it is durable. */
  record(run: RunRecord, patch: RunPatch): Promise<void> {
    this.pending.push({ id: run.id, patch });
    this.scheduled ??= new Promise<void>((resolve) => setTimeout(resolve, GROUP_COMMIT_MS)).then(
      () => this.flush(),
    );
    return this.scheduled;
  }

  /** Writes every pending update in one durable transaction. */
  async flush(): Promise<void> {
    this.scheduled = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) await this.deps.store.updateRuns(batch);
  }
}
