/**
 * What the shim gives the engine to run a command job (SPEC §11): the runner (loaded only for a
 * command job, so an HTTP fire never pays for `child_process`), `PATH HOME LANG TZ` of the shim
 * and nothing else of its environment, the resolved `env_from_secrets`, and the output as JSON
 * log lines (`output-lines.ts`), redacted and capped at `max_output_bytes`.
 */
import { effectiveCommand } from '../contract/manifest/effective.js';
import type { Job } from '../contract/manifest/types.js';
import { inheritedEnv, type CommandDeps } from '../fire/command-attempt.js';
import { CapturedOutput, type OutputWriter } from '../fire/output.js';
import type { CommandRunner } from '../fire/types.js';
import type { ShimLogger } from './log.js';
import { OutputLines } from './output-lines.js';

/** What {@link commandDeps} needs. */
export interface ShimCommandContext {
  env: NodeJS.ProcessEnv;
  logger: ShimLogger;
  /** The resolved `env_from_secrets`. */
  secretEnv: Record<string, string>;
  /** Injected runner (tests); default the real one. */
  commandRunner?: CommandRunner;
  /** Wraps the output writer (the reports keep the output's tail, SPEC §15). */
  wrapOutput?: (writer: OutputWriter) => OutputWriter;
}

/** The engine's command dependencies for one fire of `job`; `end()` flushes the output. */
export async function commandDeps(
  job: Job,
  ctx: ShimCommandContext,
): Promise<CommandDeps & { end(): void }> {
  const runner =
    ctx.commandRunner ?? (await import('../fire/command-runner.js')).createCommandRunner();
  const lines = new OutputLines(ctx.logger);
  const output = new CapturedOutput(ctx.wrapOutput ? ctx.wrapOutput(lines) : lines, {
    maxBytes: effectiveCommand(job.command ?? { argv: [] }).max_output_bytes,
    secrets: Object.values(ctx.secretEnv),
  });
  return {
    runner,
    hostEnv: inheritedEnv(ctx.env),
    secretEnv: ctx.secretEnv,
    output,
    onSpawn: (attempt, p) =>
      ctx.logger.log('info', 'command-started', `attempt ${attempt} runs as pid ${p.pid}`, {
        attempt,
        pid: p.pid,
      }),
    end: () => output.end(),
  };
}
