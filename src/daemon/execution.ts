/**
 * Running a launched run (SPEC §7, §9 items 4 and 7, §10, §11): what a run
 * needs beyond its row — its job's secrets, the job's last success
 * (`X-Cron-Previous-Success-Time`), the leader's check before every attempt,
 * the global lock of `concurrency_scope: global`, a command job's environment
 * and output file — then the per-fire engine (`executor.ts`), then its end,
 * written through the ledger. It is told to launch a run only once the run's
 * claim is durable, and tells the pipeline once the run's end is.
 *
 * Each attempt's start is written (lazily, grouped): the row turns `running`
 * and shows the attempt in flight; a command's process is recorded so a crashed
 * daemon's successor can stop it.
 */
import type { Clock, CommandRunner, Transport } from '../fire/types.js';
import { Stop, type StopSignal } from '../fire/stop.js';
import type { DaemonEmitter } from './events.js';
import { execute, type ExecuteCommand, type ExecuteDeps } from './executor.js';
import type { RunGuard } from './global-locks.js';
import { RateLimits } from './rate-limits.js';
import type { Ledger } from './ledger.js';
import type { RegisteredJob } from './registry.js';
import type { RunLogs } from './run-logs.js';
import { withPhase } from './store/record.js';
import type { EndPatch, LedgerOp, RunRecord, Store } from './store/types.js';

/** The leader's side of a run under high availability (SPEC §10). */
export interface LeaderCheck {
  /** This term's epoch, sent with every attempt (`X-Cron-Leader-Epoch`); none on one machine. */
  epoch?: number;
  /** Null while this daemon may start attempts; else why not. */
  mayAttempt(): string | null;
  /** High availability: the time before this term when no replica led (missed fires say so). */
  gap?: { from: number; to: number };
}

/** What the execution room needs. */
export interface ExecutionDeps {
  store: Store;
  clock: Clock;
  transport: Transport;
  ledger: Ledger;
  events: DaemonEmitter;
  /** Resolved secret values of a job; the first signs. */
  secretsFor(job: RegisteredJob): readonly string[];
  /** The per-attempt guard of a run (the global lock of `concurrency_scope: global`). */
  guardFor?(job: RegisteredJob, runKey: string, signal: StopSignal): RunGuard | undefined;
  leader?: LeaderCheck;
  /** Command jobs (SPEC §11): the runner, `PATH HOME LANG TZ` of the daemon, the run logs. */
  commands?: { runner: CommandRunner; hostEnv: Readonly<Record<string, string>>; logs: RunLogs };
  /** A command job's resolved `env_from_secrets`. */
  envSecretsFor?(job: RegisteredJob): Readonly<Record<string, string>>;
  /** An HTTP job's resolved `request.headers_from_secrets`. */
  headerSecretsFor?(job: RegisteredJob): Readonly<Record<string, string>>;
}

/** One launch: the job, the run, why it is being stopped (if it is), and who to tell at its end. */
export interface Launch {
  job: RegisteredJob;
  run: RunRecord;
  stopReason(): string | null;
  done(ended: RunRecord): void;
}

/** See the module comment. */
export class Execution {
  /** Each launched run's stop (see fire/stop.ts: not an `AbortController` per run). */
  private readonly stops = new Map<string, Stop>();
  /** Runs launched and not yet ended, and who waits for none to be left ({@link settled}). */
  private running = 0;
  private readonly waiters: (() => void)[] = [];
  private readonly lastSuccess = new Map<string, number | null>();
  /** Whether {@link lastSuccess} holds every job's last success from the ledger (absent: none). */
  private successesKnown = false;

  /** `policy.rate` windows, per key (SPEC §16). */
  readonly rates: RateLimits;

  constructor(private readonly deps: ExecutionDeps) {
    this.rates = new RateLimits(deps.clock, (runId, key, perSecond) =>
      deps.events.emit('info', {
        msg: `run ${runId}: waiting for rate limit (${key}, ${perSecond}/s)`,
      }),
    );
  }

  /** Sends a claimed run's attempts; its end is written, then `done` is told. */
  launch(l: Launch): void {
    const stop = new Stop();
    this.stops.set(l.run.id, stop);
    this.running += 1;
    // the attempts in a frame of their own, the end through a callback: what the attempts
    // needed (the engine's and executor's state, the guard, the stop) is garbage once they
    // end, and a run whose end waits for its commit — held behind a burst, 10,000 of them —
    // keeps only its launch, its end and one closure (BENCHMARKS.md)
    void this.attempts(l, stop).then(
      (end) => this.record(l, end),
      (err: unknown) => {
        this.stops.delete(l.run.id);
        this.finished();
        throw err; // a bug: unhandled, as before
      },
    );
  }

  /** Aborts a launched run's attempts (its end says why: the lane's stop reason). */
  abort(id: string): void {
    this.stops.get(id)?.abort();
  }

  /** Runs launched and not yet ended. */
  get active(): number {
    return this.running;
  }

  /** Resolves once every launched run has ended (runs launched meanwhile included). */
  settled(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** A run's end, written; then its lane is told (release after record). */
  private record(l: Launch, end: EndPatch): void {
    this.stops.delete(l.run.id); // a stop from now on has nothing left to stop
    this.deps.ledger.submitThen([{ kind: 'end', id: l.run.id, patch: end }], false, ([res]) => {
      try {
        const ended: RunRecord =
          res?.kind === 'ended' ? res.run : { ...l.run, ...end, phase: 'ended' };
        if (ended.outcome === 'success') this.lastSuccess.set(l.job.key, ended.endedAt);
        l.done(ended);
      } finally {
        this.finished();
      }
    });
  }

  /** A launched run is over: {@link settled} may resolve. */
  private finished(): void {
    this.running -= 1;
    if (this.running === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /**
   * The ledger's last success of every job that has one (read at start-up): a job absent from it
   * never succeeded, so runs need not ask the store (100,000 jobs were 100,000 `null` entries).
   */
  knownSuccesses(byJob: Map<string, number>): void {
    for (const [key, at] of byJob) this.lastSuccess.set(key, at);
    this.successesKnown = true;
  }

  /** The job's last success: known (most runs, no promise), or read from the ledger once. */
  private previousSuccess(job: RegisteredJob): number | null | Promise<number | null> {
    const previous = this.lastSuccess.get(job.key) ?? (this.successesKnown ? null : undefined);
    if (previous !== undefined) return previous;
    return this.deps.store
      .lastSuccess(job.app, job.job.name)
      .catch(() => null)
      .then((read) => {
        this.lastSuccess.set(job.key, read);
        return read;
      });
  }

  /** A launched run's attempts, through the engine: how it ended. */
  private async attempts(l: Launch, signal: StopSignal): Promise<EndPatch> {
    const { job } = l;
    const { clock, transport } = this.deps;
    const known = this.previousSuccess(job);
    const previous = typeof known === 'object' && known !== null ? await known : known;
    const secrets = this.deps.secretsFor(job);
    const run = withPhase(l.run, 'running');
    const { events } = this.deps;
    events.emit('run-launched', run);
    const guard = withLeadership(
      withRate(this.deps.guardFor?.(job, run.runKey, signal), this.rates, job, run.id, signal),
      this.deps.leader,
    );
    const command = job.job.command !== undefined ? this.commandOf(job, run) : undefined;
    if (secrets.length === 0 && job.job.command === undefined)
      return { outcome: 'internal_error', endedAt: clock.now(), error: 'no secret resolved' };
    // built field by field, not spread: one object per run of a burst
    const deps: ExecuteDeps = {
      clock,
      transport,
      secrets,
      previousSuccessMs: previous,
      signal,
      stopReason: l.stopReason,
      // the launched record, not this copy: the copy goes with the attempts' frame
      onAttempt: (attempt) => this.attempted(l.run, attempt),
    };
    if (this.deps.leader?.epoch !== undefined) deps.leaderEpoch = this.deps.leader.epoch;
    if (this.deps.headerSecretsFor) deps.headerSecrets = this.deps.headerSecretsFor(job);
    if (guard?.guard) deps.guard = guard.guard;
    if (guard?.record) deps.record = guard.record;
    if (command) deps.command = command;
    return await execute(job, run, deps);
  }

  /** An attempt has started: its row says so (lazily); the first one announces the run started. */
  private attempted(run: RunRecord, attempt: number): void {
    const { ledger, events } = this.deps;
    const op: LedgerOp = { kind: 'attempt', id: run.id, attempt };
    if (attempt > 1) return ledger.submitThen([op], false, ignore);
    // announced once its row says so: what reads the ledger then sees it running
    ledger.submitThen([op], false, ([r]) => {
      if (r?.kind === 'ok') events.emit('run-started', inFlight(run));
    });
  }

  /** What a command run needs; each attempt's process is recorded, to be stopped after a crash. */
  private commandOf(job: RegisteredJob, run: RunRecord): ExecuteCommand | undefined {
    const commands = this.deps.commands;
    if (!commands) return undefined;
    return {
      ...commands,
      secretEnv: this.deps.envSecretsFor?.(job) ?? {},
      onSpawn: (p) =>
        void this.deps.ledger.submit([
          { kind: 'process', id: run.id, pid: p.pid, startTime: p.startTime },
        ]),
    };
  }
}

/**
 * Puts the job's rate limit (`policy.rate`) in front of a run's guard: each attempt waits for
 * a place in its key's window before it takes the global lock (if any) and starts.
 */
function withRate(
  inner: RunGuard | undefined,
  rates: RateLimits,
  job: RegisteredJob,
  runId: string,
  signal: StopSignal,
): Partial<RunGuard> | undefined {
  const rate = job.job.policy.rate;
  if (!rate) return inner;
  return {
    ...inner,
    guard: {
      async acquire(attempt) {
        await rates.take(rate.key, rate.per_second, runId, signal);
        return inner ? inner.guard.acquire(attempt) : { ok: true, release: async () => undefined };
      },
    },
  };
}

/**
 * Puts the leader's check in front of a run's guard: no attempt starts once
 * this replica may no longer be the leader (SPEC §10).
 */
function withLeadership(
  inner: Partial<RunGuard> | undefined,
  leader: LeaderCheck | undefined,
): Partial<RunGuard> | undefined {
  if (!leader) return inner;
  return {
    ...inner,
    guard: {
      async acquire(attempt) {
        const why = leader.mayAttempt();
        if (why !== null) return { ok: false, outcome: 'stopped', message: why };
        return inner?.guard
          ? inner.guard.acquire(attempt)
          : { ok: true, release: async () => undefined };
      },
    },
  };
}

/** What a later attempt's row write is answered with: nothing to do. */
function ignore(): void {}

/** The record of a run whose first attempt is in flight, as the ledger now has it. */
function inFlight(run: RunRecord): RunRecord {
  const started = withPhase(run, 'running');
  started.attempts = Math.max(1, started.attempts);
  return started;
}
