/**
 * One instance of a service (SPEC §17): a loop that starts the service's process, records each
 * start and exit in the ledger (trigger `service`), captures its output per start, marks it ready,
 * and after an exit starts it again after the backoff (`policy.ts`). The process layer is the
 * command jobs' own: `CommandRunner` (a process group of its own, SIGTERM then SIGKILL after the
 * graceful stop, nothing of the group outlives it), `RunLogs` (output capped and redacted), the
 * ledger's `process` op (pid and start time, for the leftovers of a crash).
 *
 * The loop runs until {@link Instance.retire}; an operator's stop parks it (`stopped`) until a
 * start. Everything it decides goes through its owner's hooks (`InstanceHooks`): the crash loop
 * and notifications are the service's (`supervisor.ts`), not one instance's.
 */
import type { EffectiveService } from '../../contract/manifest/effective.js';
import { COMMAND_ENV } from '../../contract/run.js';
import { signalGroup } from '../../fire/process-group.js';
import type { CommandResult } from '../../fire/types.js';
import type { EndPatch, NewRun, RunRecord } from '../store/types.js';
import type { InstanceDeps, InstanceHooks, InstanceState, InstanceView } from './instance-types.js';
import { lifelineAvailable, tiedArgv } from './lifeline.js';
import { serviceRow } from './rows.js';

export type { InstanceDeps, InstanceHooks, InstanceState, InstanceView } from './instance-types.js';
import { exitOutcome, restartDelayMs, type InstanceExit } from './policy.js';
import { readyTarget, waitReady } from './readiness.js';

/** Longest single timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A service has no deadline: about a century. */
const NO_DEADLINE_MS = 100 * 365 * 86_400_000;
/** While this daemon may not start processes, it looks again this often. */
const NOT_ALLOWED_RETRY_MS = 1000;

/** The process being run, and how to stop it. */
interface Current {
  run: RunRecord;
  abort: AbortController;
  pid: number | null;
  /** Why cronix stops it; null while it runs on. */
  stopReason: string | null;
  /** Resolves once its end is in the ledger. */
  done: Promise<void>;
  /** Resolves once it is ready, ready-timed-out, or gone. */
  settled: Promise<void>;
}

/** See the module comment. */
export class Instance {
  state: InstanceState = 'stopped';
  private current: Current | null = null;
  private last: { runId: string; exit: InstanceView['lastExit'] } | null = null;
  private restarts = 0;
  private starts = 0;
  private ready: boolean | null = null;
  private exitsInARow = 0;
  private nextStartAt: number | null = null;
  /** The operator wants it running (a stop parks it). */
  private wanted = true;
  private retired = false;
  private wake: AbortController = new AbortController();
  private loop: Promise<void> | null = null;
  private stableTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: InstanceDeps,
    private readonly hooks: InstanceHooks,
  ) {}

  get index(): number {
    return this.deps.index;
  }

  /** Starts the loop (the first process at once). */
  begin(): void {
    this.loop ??= this.run();
  }

  view(): InstanceView {
    return {
      index: this.deps.index,
      state: this.state,
      pid: this.current?.pid ?? null,
      runId: this.current?.run.id ?? this.last?.runId ?? null,
      startedAt: this.current?.run.startedAt ?? null,
      restarts: this.restarts,
      ready: this.ready,
      lastExit: this.last?.exit ?? null,
      nextStartAt: this.state === 'backoff' ? this.nextStartAt : null,
      crashLoop: this.hooks.looping(this.deps.index),
    };
  }

  /** Whether a process of this instance is up (starting, running or ready). */
  get up(): boolean {
    return this.current !== null && this.current.stopReason === null;
  }

  /**
   * A manual start: `started` (it was stopped or waiting out its backoff, and starts now) or
   * `skipped` (it runs). Resolves once the process started and is ready (or its check gave up).
   */
  async start(): Promise<'started' | 'skipped'> {
    if (this.up) return 'skipped';
    this.wanted = true;
    this.nextStartAt = null;
    this.kick();
    await this.nextProcess();
    return 'started';
  }

  /** Stops the process (graceful; at once with `now`) and parks the loop until a start. */
  async stop(reason: string, now = false): Promise<void> {
    this.wanted = false;
    await this.stopCurrent(reason, now);
    this.kick();
  }

  /** Stops the process and starts a new one at once (no backoff); resolves once it is up. */
  async restart(reason: string): Promise<void> {
    this.wanted = true;
    const waitNext = this.up ? this.stopCurrent(reason, false) : Promise.resolve();
    this.nextStartAt = null;
    await waitNext;
    this.kick();
    await this.nextProcess();
  }

  /** Stops the process and ends the loop for good (removed, shutdown, the term ended). */
  async retire(reason: string, now = false): Promise<void> {
    this.retired = true;
    this.wanted = false;
    await this.stopCurrent(reason, now);
    this.kick();
    await this.loop;
  }

  // ---- the loop ----

  private kick(): void {
    this.wake.abort();
  }

  private async nap(ms: number): Promise<void> {
    this.wake = new AbortController();
    if (this.retired) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
      this.wake.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), {
        once: true,
      });
    });
  }

  /** Waits for the start after this call to be up and ready (or gone). */
  private async nextProcess(): Promise<void> {
    const before = this.starts;
    while (!this.retired && this.wanted && this.starts === before) await tick();
    await this.current?.settled;
  }

  private async run(): Promise<void> {
    while (!this.retired) {
      if (!this.wanted) {
        this.setState('stopped');
        await this.nap(MAX_TIMER_MS);
        continue;
      }
      const now = this.deps.clock.now();
      if (this.nextStartAt !== null && now < this.nextStartAt) {
        this.setState('backoff');
        await this.nap(this.nextStartAt - now);
        continue;
      }
      const why = this.deps.mayStart();
      if (why !== null) {
        this.nextStartAt = now + NOT_ALLOWED_RETRY_MS;
        continue;
      }
      const current = await this.launch();
      if (current === null) break; // the ledger refuses this daemon: it runs nothing more
      await current.done;
    }
    this.setState('stopped');
  }

  /** Records a start and launches its process; null when the ledger refused to record it. */
  private async launch(): Promise<Current | null> {
    const { clock, ledger, events } = this.deps;
    const { service, secretEnv } = this.hooks.definition();
    const now = clock.now();
    const run = this.newRun(now);
    const [result] = await ledger.submit([{ kind: 'insert', run }]);
    if (result?.kind !== 'recorded') return null;
    const recorded = result.run;
    events.emit('run-recorded', recorded);
    events.emit('run-started', recorded);
    this.starts += 1;
    if (this.starts > 1) this.restarts += 1;
    const abort = new AbortController();
    let settle: () => void = () => undefined;
    const settled = new Promise<void>((r) => (settle = r));
    const current: Current = {
      run: recorded,
      abort,
      pid: null,
      stopReason: null,
      done: Promise.resolve(),
      settled,
    };
    this.current = current;
    this.ready = service.ready === null ? null : false;
    this.setState('starting');
    current.done = this.supervise(current, service, secretEnv, settle);
    return current;
  }

  private newRun(now: number): NewRun {
    return serviceRow(this.deps.app, this.deps.service, this.deps.index, now);
  }

  /** Runs one process to its end and records it. */
  private async supervise(
    current: Current,
    service: EffectiveService,
    secretEnv: Readonly<Record<string, string>>,
    settle: () => void,
  ): Promise<void> {
    const { clock, runner, hostEnv, logs, ledger, events, index } = this.deps;
    const { run } = current;
    const log = logs.open(run.id, {
      maxBytes: service.max_output_bytes,
      secrets: Object.values(secretEnv),
    });
    log.sink.attempt(1);
    const env: Record<string, string> = {
      ...hostEnv,
      ...service.env,
      ...secretEnv,
      CRONIX_SERVICE: this.deps.service,
      CRONIX_INSTANCE: String(index),
      [COMMAND_ENV.runId]: run.id,
    };
    const tied = lifelineAvailable();
    const grace = Math.min(service.graceful_stop_seconds, this.deps.orphanGraceCapSeconds);
    let result: CommandResult;
    try {
      result = await runner.run(
        {
          argv: tied ? tiedArgv(service.argv, grace) : service.argv,
          env,
          cwd: service.cwd ?? hostEnv['HOME'] ?? '/',
          gracefulStopMs: service.graceful_stop_seconds * 1000,
          lifeline: tied,
        },
        {
          timeoutMs: NO_DEADLINE_MS,
          signal: current.abort.signal,
          output: log.sink,
          onSpawn: (p) => {
            current.pid = p.pid;
            void ledger.submit(
              [{ kind: 'process', id: run.id, pid: p.pid, startTime: p.startTime }],
              false,
            );
            this.setState(service.ready === null ? 'running' : 'starting');
            this.armStable(current, service);
            void this.checkReady(current, service).finally(settle);
          },
        },
      );
    } catch (err) {
      result = { kind: 'spawn-error', message: `internal error: ${(err as Error).message}` };
    }
    settle();
    clearTimeout(this.stableTimer);
    log.sink.attemptEnded(1);
    await log.close();
    const endedAt = clock.now();
    const exit: InstanceExit =
      current.stopReason !== null
        ? { kind: 'stopped', reason: current.stopReason }
        : result.kind === 'exit' || result.kind === 'spawn-error'
          ? result
          : { kind: 'stopped', reason: 'stopped' };
    const { outcome, error } = exitOutcome(exit);
    const patch: EndPatch = {
      outcome,
      endedAt,
      error,
      attempts: 1,
      attemptLog: [
        {
          attempt: 1,
          startedAt: run.startedAt ?? endedAt,
          durationMs: endedAt - (run.startedAt ?? endedAt),
          status: null,
          error,
        },
      ],
      outputTruncated: log.sink.truncated,
      outputLost: log.lost(),
    };
    const [ended] = await ledger.submit([{ kind: 'end', id: run.id, patch }]);
    const endedRun = ended?.kind === 'ended' ? ended.run : null;
    if (endedRun) events.emit('run-ended', endedRun);
    this.current = null;
    this.ready = null;
    this.last = { runId: run.id, exit: { at: endedAt, outcome, error } };
    if (exit.kind !== 'stopped') {
      this.exitsInARow += 1;
      this.nextStartAt = endedAt + restartDelayMs(this.exitsInARow, service.restart);
      this.hooks.exited(index, endedAt, endedRun);
    }
    this.setState(this.wanted && !this.retired ? 'backoff' : 'stopped');
  }

  /** Up `reset_after_seconds`: the backoff starts over and the service hears of it. */
  private armStable(current: Current, service: EffectiveService): void {
    clearTimeout(this.stableTimer);
    this.stableTimer = setTimeout(
      () => {
        if (this.current !== current) return;
        this.exitsInARow = 0;
        this.hooks.stable(this.deps.index, current.run);
      },
      Math.min(service.restart.reset_after_seconds * 1000, MAX_TIMER_MS),
    );
    this.stableTimer.unref();
  }

  private async checkReady(current: Current, service: EffectiveService): Promise<void> {
    if (service.ready === null) return;
    const ok = await waitReady(service.ready, this.deps.index, current.abort.signal);
    if (this.current !== current || current.stopReason !== null) return;
    this.ready = ok;
    this.setState(ok ? 'ready' : 'running');
    if (!ok)
      this.deps.events.emit('warning', {
        msg: `${this.deps.app}/${this.deps.service}: instance ${this.deps.index} is not ready after ${service.ready.timeout_seconds} s (${readyTarget(service.ready, this.deps.index)}); it keeps running`,
      });
  }

  /** Stops the current process, if any; resolves once its end is recorded. */
  private async stopCurrent(reason: string, now: boolean): Promise<void> {
    const current = this.current;
    this.kick();
    if (!current) return;
    if (current.stopReason === null) current.stopReason = reason;
    this.setState('stopping');
    // a term that ended cannot wait for a graceful stop: the lease is released right after
    if (now && current.pid !== null) signalGroup(current.pid, 'SIGKILL');
    current.abort.abort();
    await current.done;
  }

  private setState(state: InstanceState): void {
    if (this.state === state) return;
    this.state = state;
    this.hooks.changed(this.deps.index);
  }
}

/** One turn of the event loop. */
function tick(): Promise<void> {
  return new Promise((r) => setTimeout(r, 10));
}
