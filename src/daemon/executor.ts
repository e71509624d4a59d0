/**
 * Runs one claimed run through the shared per-fire engine (`runFire`, the only
 * attempt loop) and explains its end (SPEC §9 item 7): the outcome, a short
 * `error` and the `attemptLog`, built from the engine's events. Knows nothing
 * of slots, queues or the ledger: the scheduler calls it for a run whose
 * `running` row and run-key claim are durable, and records what it returns.
 */
import { withParams } from './run-params.js';
import { effectiveCommand } from '../contract/manifest/effective.js';
import {
  runFire,
  type AttemptGuard,
  type CommandDeps,
  type FireDeps,
  type FireEvent,
  type FireInput,
} from '../fire/engine.js';
import type { Clock, CommandRunner, SpawnedProcess, Transport } from '../fire/types.js';
import type { StopSignal } from '../fire/stop.js';
import { redact } from '../secrets/resolve.js';
import { ledgerOutcome } from './policy.js';
import type { RegisteredJob } from './registry.js';
import type { RunLog, RunLogs } from './run-logs.js';
import type { AttemptLogEntry, EndPatch, RunRecord } from './store/types.js';

/** Characters of an attempt's response body kept in its attempt log (about 4 KiB). */
export const RESPONSE_KEPT_CHARS = 4096;

/**
 * The part of a response body an attempt log keeps: redacted first, then cut, so a secret that
 * straddles the cut never leaves its first characters behind. Only what can reach the kept part
 * is redacted (a body is up to 64 KiB; a secret overlapping the cut ends before it + its length).
 */
export function keptResponse(body: string, secrets: readonly string[]): string {
  let longest = 0;
  for (const s of secrets) longest = Math.max(longest, s.length);
  return redact(body.slice(0, RESPONSE_KEPT_CHARS + longest), secrets).slice(
    0,
    RESPONSE_KEPT_CHARS,
  );
}

/** What a command run needs (SPEC §11). */
export interface ExecuteCommand {
  runner: CommandRunner;
  /** `PATH HOME LANG TZ` of the daemon. */
  hostEnv: Readonly<Record<string, string>>;
  /** The job's resolved `env_from_secrets`. */
  secretEnv: Readonly<Record<string, string>>;
  /** Where the run's output is kept. */
  logs: RunLogs;
  /** Told each attempt's process (the scheduler records it in the ledger). */
  onSpawn(process: SpawnedProcess): void;
}

/** Dependencies of {@link execute}. */
export interface ExecuteDeps {
  clock: Clock;
  transport: Transport;
  /** The job's resolved secrets; the first signs. */
  secrets: readonly string[];
  /** An HTTP job's resolved `request.headers_from_secrets`; redacted from errors like secrets. */
  headerSecrets?: Readonly<Record<string, string>>;
  /** Last success of the job (`X-Cron-Previous-Success-Time`). */
  previousSuccessMs: number | null;
  /** The leader's epoch under high availability (`X-Cron-Leader-Epoch`). */
  leaderEpoch?: number;
  /** Per-attempt guard (the global lock for `concurrency_scope: global`). */
  guard?: AttemptGuard;
  /** Records the fire's success under the guard's lock, before it is released. */
  record?: FireDeps['record'];
  /** Aborts the run (Replace, cancel, shutdown). */
  signal: StopSignal;
  /** Why the signal fired, read when the run ends `stopped`. */
  stopReason(): string | null;
  /** Told as each attempt starts (the ledger shows it in flight). */
  onAttempt?(attempt: number): void;
  /** Command jobs only. */
  command?: ExecuteCommand;
}

/**
 * Short reason of a failed attempt: `HTTP 503`, or the transport's message; for a command, the
 * engine's (`exit code 3`, `killed by signal SIGKILL`, `timeout after 30s; …`).
 */
function attemptError(e: FireEvent, isCommand: boolean): string | null {
  if (e.err !== undefined) return e.err;
  if (isCommand) return null;
  if (e.status !== undefined && (e.status < 200 || e.status > 299)) return `HTTP ${e.status}`;
  return null;
}

/** The engine's command dependencies of one run, with its log opened. */
function openCommand(
  job: RegisteredJob,
  run: RunRecord,
  c: ExecuteCommand,
): { deps: CommandDeps; log: RunLog } {
  const log = c.logs.open(run.id, {
    maxBytes: effectiveCommand(job.job.command ?? { argv: [] }).max_output_bytes,
    secrets: Object.values(c.secretEnv),
  });
  return {
    log,
    deps: {
      runner: c.runner,
      hostEnv: c.hostEnv,
      secretEnv: c.secretEnv,
      output: log.sink,
      onSpawn: (_attempt, p) => c.onSpawn(p),
    },
  };
}

/** Runs the run's attempts; resolves with its end (never rejects). */
export async function execute(
  job: RegisteredJob,
  run: RunRecord,
  deps: ExecuteDeps,
): Promise<EndPatch> {
  const { clock } = deps;
  const isCommand = job.job.command !== undefined;
  const log: AttemptLogEntry[] = [];
  let opened: { attempt: number; startedAt: number } | null = null;
  let terminalError: string | null = null;
  // every value redacted from what is kept: built when something is to be redacted
  let secretList: string[] | undefined;
  const secrets = (): string[] =>
    (secretList ??= [
      ...deps.secrets,
      ...Object.values(deps.command?.secretEnv ?? {}),
      ...Object.values(deps.headerSecrets ?? {}),
    ]);
  const onEvent = (e: FireEvent): void => {
    if (e.event === 'attempt') {
      opened = { attempt: e.attempt ?? log.length + 1, startedAt: clock.now() };
      deps.onAttempt?.(opened.attempt);
      return;
    }
    if (opened !== null && e.durationMs !== undefined) {
      // what was sent and what came back, as they were (the run page shows them)
      const entry: AttemptLogEntry = {
        attempt: opened.attempt,
        startedAt: opened.startedAt,
        durationMs: e.durationMs,
        status: e.status ?? null,
        error: attemptError(e, isCommand),
      };
      if (e.traceparent !== undefined) entry.traceparent = e.traceparent;
      if (e.responseBody !== undefined)
        entry.response = e.responseBody === '' ? '' : keptResponse(e.responseBody, secrets());
      log.push(entry);
      opened = null;
    }
    if (e.terminal && e.event !== 'success') terminalError = attemptError(e, isCommand);
  };
  const clean = (text: string | null): string | null =>
    text === null ? null : redact(text, secrets()).slice(0, 500);
  let capture: { deps: CommandDeps; log: RunLog } | undefined;
  try {
    if (isCommand && deps.command) capture = openCommand(job, run, deps.command);
    const input: FireInput = {
      app: job.app,
      job: withParams(job.job, run.params),
      runId: run.id,
      runKey: run.runKey,
      fireTimeMs: run.scheduledTime,
      actualTimeMs: run.startedAt ?? clock.now(),
      secrets: deps.secrets,
      previousSuccessMs: deps.previousSuccessMs,
    };
    if (deps.headerSecrets) input.headerSecrets = deps.headerSecrets;
    if (deps.leaderEpoch !== undefined) input.leaderEpoch = deps.leaderEpoch;
    const fireDeps: FireDeps = {
      transport: deps.transport,
      clock,
      signal: deps.signal,
      onEvent,
    };
    if (capture) fireDeps.command = capture.deps;
    if (deps.guard) fireDeps.guard = deps.guard;
    if (deps.record) fireDeps.record = deps.record;
    const result = await runFire(input, fireDeps);
    if (opened !== null) {
      // an attempt cut short by a stop: it was sent, so it is in the log
      const o: { attempt: number; startedAt: number } = opened;
      log.push({
        attempt: o.attempt,
        startedAt: o.startedAt,
        durationMs: clock.now() - o.startedAt,
        status: null,
        error: 'stopped',
      });
    }
    if (capture) await capture.log.close();
    const outcome = ledgerOutcome(result.outcome);
    let error: string | null = null;
    if (outcome === 'stopped') error = deps.stopReason() ?? 'stopped';
    else if (outcome !== 'success') {
      const last = log.at(-1);
      error = last?.error ?? terminalError ?? result.message ?? outcome;
    }
    // the entries are this run's own: their errors are redacted in place
    for (const entry of log) if (entry.error !== null) entry.error = clean(entry.error);
    const end: EndPatch = {
      outcome,
      endedAt: clock.now(),
      error: clean(error),
      attempts: result.attempts,
      lastStatus: result.lastStatus,
      attemptLog: log,
    };
    if (capture) {
      end.outputTruncated = capture.log.sink.truncated;
      end.outputLost = capture.log.lost();
    }
    return end;
  } catch (err) {
    await capture?.log.close().catch(() => undefined);
    // never leave a run active: an unexpected failure ends it, the daemon goes on
    return {
      outcome: 'internal_error',
      endedAt: clock.now(),
      error: clean(`internal error: ${(err as Error).message}`),
      attemptLog: log,
    };
  }
}
