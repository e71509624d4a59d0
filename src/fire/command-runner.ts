/**
 * The command runner of the per-fire engine (SPEC §11), on `node:child_process`.
 *
 * One `run` is one attempt: `argv` is executed directly (no shell: `spawn` with `shell: false`,
 * so `;`, `$VAR`, globs and quotes reach the program as they are), with exactly the environment
 * given, stdin from /dev/null, stdout and stderr piped to the output sink. The process is the
 * leader of a process group of its own (`detached: true` = `setsid`), so:
 *
 * - at the deadline, or when the signal aborts (Replace, cancel, shutdown, SIGTERM of the
 *   shim), the whole group gets SIGTERM, then SIGKILL after the graceful stop, and `run`
 *   resolves only once no process of the group is left;
 * - when the leader exits on its own, whatever it left running in its group is stopped the same
 *   way before `run` resolves: nothing of an attempt outlives it, so the job's lock means what
 *   it says. (A process that leaves the group with `setsid` is beyond reach, as under cron.)
 *
 * `run` never rejects: a program that cannot be started is a `spawn-error`.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { processStartTime, stopGroup } from './process-group.js';
import type {
  CommandOptions,
  CommandRequest,
  CommandResult,
  CommandRunner,
  OutputStream,
} from './types.js';

/** After the group is gone, how long to wait for the pipes to close (a setsid escapee may hold them). */
const PIPE_CLOSE_WAIT_MS = 1_000;
/** Longest single `setTimeout`. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Words for the errno of a failed spawn. */
function spawnProblem(err: NodeJS.ErrnoException, program: string, path: string): string {
  const shown = JSON.stringify(program.length > 200 ? `${program.slice(0, 200)}…` : program);
  switch (err.code) {
    case 'ENOENT':
      return program.includes('/')
        ? `cannot run ${shown}: no such file`
        : `cannot run ${shown}: not found in PATH (${path || 'PATH is not set'})`;
    case 'EACCES':
      return `cannot run ${shown}: permission denied (is it executable?)`;
    case 'ENOEXEC':
      return `cannot run ${shown}: not an executable format (a script needs a #! line)`;
    default:
      return `cannot run ${shown}: ${err.code ?? err.message}`;
  }
}

/** A problem with the working directory, or null when it is usable. */
function cwdProblem(cwd: string): string | null {
  try {
    return statSync(cwd).isDirectory()
      ? null
      : `working directory ${JSON.stringify(cwd)} is not a directory`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `working directory ${JSON.stringify(cwd)} ${code === 'ENOENT' ? 'does not exist' : `cannot be used: ${code}`}`;
  }
}

/** Creates the real command runner. */
export function createCommandRunner(): CommandRunner {
  return { run: runOnce };
}

function runOnce(request: CommandRequest, options: CommandOptions): Promise<CommandResult> {
  const [program, ...args] = request.argv;
  if (program === undefined) return Promise.resolve({ kind: 'spawn-error', message: 'empty argv' });
  const badCwd = cwdProblem(request.cwd);
  if (badCwd !== null) return Promise.resolve({ kind: 'spawn-error', message: badCwd });
  if (options.signal?.aborted) return Promise.resolve({ kind: 'aborted' });

  return new Promise<CommandResult>((resolve) => {
    const child = spawn(program, args, {
      cwd: request.cwd,
      env: { ...request.env },
      detached: true,
      shell: false,
      // (typed as the three pipes every run has; fd 3 is read from child.stdio below)
      stdio: (request.lifeline
        ? ['ignore', 'pipe', 'pipe', 'pipe']
        : ['ignore', 'pipe', 'pipe']) as ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    // the lifeline's other end: held, never written, closed by the OS when this process dies
    const lifeline = request.lifeline
      ? ((child.stdio as unknown[])[3] as Duplex | undefined)
      : undefined;
    lifeline?.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    let stopping: Promise<unknown> | null = null;
    let stopReason: 'timeout' | 'aborted' | null = null;
    let exited: { code: number | null; signal: string | null } | null = null;
    let open = 2;
    let pipesClosed: () => void = () => undefined;
    const pipesDone = new Promise<void>((r) => (pipesClosed = r));

    const forward = (stream: OutputStream) => (chunk: Buffer) =>
      options.output?.write(stream, chunk);
    const onClose = (): void => {
      open -= 1;
      if (open === 0) pipesClosed();
    };
    for (const [name, pipe] of [
      ['stdout', child.stdout],
      ['stderr', child.stderr],
    ] as const) {
      pipe.on('data', forward(name));
      pipe.on('error', () => undefined); // a broken pipe ends with 'close' too
      pipe.on('close', onClose);
    }

    const stop = (reason: 'timeout' | 'aborted'): void => {
      if (stopping !== null || child.pid === undefined) return;
      stopReason = reason;
      stopping = stopGroup(child.pid, request.gracefulStopMs);
    };
    const onAbort = (): void => stop('aborted');

    const finish = async (result: CommandResult): Promise<void> => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // nothing of the attempt outlives it: leftovers of the group are stopped as well
      if (stopping === null && child.pid !== undefined)
        stopping = stopGroup(child.pid, request.gracefulStopMs);
      await stopping;
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([
        pipesDone,
        new Promise<void>((r) => (waited = setTimeout(r, PIPE_CLOSE_WAIT_MS))),
      ]);
      clearTimeout(waited);
      child.stdout.destroy();
      child.stderr.destroy();
      lifeline?.destroy();
      resolve(result);
    };

    child.once('error', (err: NodeJS.ErrnoException) => {
      // only before the process ran (spawn failed): after 'spawn', errors come with 'exit'
      if (child.pid !== undefined) return;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        kind: 'spawn-error',
        message: spawnProblem(err, program, request.env['PATH'] ?? ''),
      });
    });
    child.once('spawn', () => {
      const pid = child.pid as number;
      options.onSpawn?.({ pid, startTime: processStartTime(pid) });
      const due = Date.now() + options.timeoutMs;
      const arm = (): void => {
        const left = due - Date.now();
        if (left <= 0) return stop('timeout');
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      arm();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) onAbort();
    });
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      const result: CommandResult =
        stopReason !== null ? { kind: stopReason } : { kind: 'exit', ...exited };
      void finish(result);
    });
  });
}
