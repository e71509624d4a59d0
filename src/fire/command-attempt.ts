/**
 * One attempt of a command job (SPEC §11) for the per-fire engine: the process's environment,
 * and how its end is classified. The engine's loop (locks, retries, backoff, record before
 * release) is the same as for HTTP jobs; only the attempt itself differs.
 */
import { effectiveCommand } from '../contract/manifest/effective.js';
import type { Job } from '../contract/manifest/types.js';
import { classifyExit, COMMAND_ENV, INHERITED_ENV } from '../contract/run.js';
import type { AttemptCall, AttemptEnd, FireInput } from './attempt.js';
import type { CommandResult, CommandRunner, OutputSink, SpawnedProcess } from './types.js';

/** What the engine needs to run command jobs, injected by the shim and the daemon. */
export interface CommandDeps {
  runner: CommandRunner;
  /** `PATH HOME LANG TZ` of the cronix process (see {@link inheritedEnv}). */
  hostEnv: Readonly<Record<string, string>>;
  /** The job's `env_from_secrets`, resolved: variable name → secret value. */
  secretEnv: Readonly<Record<string, string>>;
  /** Where the fire's output goes (every attempt). */
  output?: OutputSink;
  /** Told each attempt's process once it runs (the daemon records it, to stop it after a crash). */
  onSpawn?(attempt: number, process: SpawnedProcess): void;
}

/** The per-attempt values a command sees as `CRONIX_*` variables. */
export interface AttemptContext {
  runId: string;
  runKey: string;
  /** Intended fire time, epoch ms. */
  fireTimeMs: number;
  attempt: number;
  previousSuccessMs: number | null;
  fencingToken: number | undefined;
  leaderEpoch: number | undefined;
}

/** The variables of {@link INHERITED_ENV} that are set in `env`. */
export function inheritedEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * The whole environment of one attempt, in this order (later wins): `PATH HOME LANG TZ` of
 * cronix, the job's `env`, the resolved `env_from_secrets`, then the `CRONIX_*` variables that
 * apply (a job cannot set those: the manifest refuses the names). Nothing else leaks in.
 */
export function commandEnv(
  job: Job,
  deps: Pick<CommandDeps, 'hostEnv' | 'secretEnv'>,
  ctx: AttemptContext,
): Record<string, string> {
  const command = effectiveCommand(job.command ?? { argv: [] });
  const seconds = (ms: number): string => String(Math.floor(ms / 1000));
  const env: Record<string, string> = {
    ...deps.hostEnv,
    ...command.env,
    ...deps.secretEnv,
    [COMMAND_ENV.runId]: ctx.runId,
    [COMMAND_ENV.runKey]: ctx.runKey,
    [COMMAND_ENV.fireTime]: seconds(ctx.fireTimeMs),
    [COMMAND_ENV.attempt]: String(ctx.attempt),
  };
  if (ctx.previousSuccessMs !== null)
    env[COMMAND_ENV.previousSuccessTime] = seconds(ctx.previousSuccessMs);
  if (ctx.fencingToken !== undefined) env[COMMAND_ENV.fencingToken] = String(ctx.fencingToken);
  if (ctx.leaderEpoch !== undefined) env[COMMAND_ENV.leaderEpoch] = String(ctx.leaderEpoch);
  return env;
}

/** Classifies a command's end for the engine; `timeoutSeconds` names a timeout. */
export function commandEnd(
  result: CommandResult,
  job: Job,
  timeoutSeconds: number,
  lostHold: boolean,
): AttemptEnd {
  const command = effectiveCommand(job.command ?? { argv: [] });
  switch (result.kind) {
    case 'exit': {
      const cls = classifyExit(result.code, command.success_exit_codes, command.reject_exit_codes);
      if (result.code === null)
        return { cls, err: `killed by signal ${result.signal ?? 'unknown'}` };
      if (cls === 'success') return { cls, status: result.code };
      const why = cls === 'app-rejected' ? ' (a reject exit code: not retried)' : '';
      return { cls, status: result.code, err: `exit code ${result.code}${why}` };
    }
    case 'spawn-error':
      return { cls: 'command-failed', err: result.message };
    case 'timeout':
      return {
        cls: 'timeout',
        err: `timeout after ${timeoutSeconds}s; the process group was stopped`,
      };
    case 'aborted':
      // the hold was lost mid-attempt (a global lease taken over): a failed attempt, retried
      return lostHold
        ? { cls: 'command-failed', err: 'lock lost during the attempt; the command was stopped' }
        : { cls: 'aborted' };
  }
}

/** The working directory of a command: its `cwd`, else HOME of cronix, else `/`. */
export function commandCwd(job: Job, hostEnv: Readonly<Record<string, string>>): string {
  return job.command?.cwd ?? hostEnv['HOME'] ?? '/';
}

/** Runs one command attempt in its own process group. */
export async function runCommand(
  input: FireInput,
  command: CommandDeps,
  call: AttemptCall,
): Promise<AttemptEnd> {
  const { job } = input;
  const timeoutSeconds = job.policy.timeout_seconds;
  const effective = effectiveCommand(job.command ?? { argv: [] });
  command.output?.attempt(call.attempt);
  const result = await command.runner.run(
    {
      argv: effective.argv,
      env: commandEnv(job, command, {
        runId: input.runId,
        runKey: input.runKey,
        fireTimeMs: input.fireTimeMs,
        attempt: call.attempt,
        previousSuccessMs: input.previousSuccessMs,
        fencingToken: call.fencingToken,
        leaderEpoch: input.leaderEpoch,
      }),
      cwd: commandCwd(job, command.hostEnv),
      gracefulStopMs: effective.graceful_stop_seconds * 1000,
    },
    {
      timeoutMs: timeoutSeconds * 1000,
      ...(call.signal ? { signal: call.signal } : {}),
      ...(command.output ? { output: command.output } : {}),
      onSpawn: (p) => command.onSpawn?.(call.attempt, p),
    },
  );
  command.output?.attemptEnded?.(call.attempt);
  return commandEnd(result, job, timeoutSeconds, !call.stopped());
}
