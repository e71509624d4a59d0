/**
 * How the systemd backend talks to systemd: `systemctl` through `execFile` (no shell), behind
 * an injectable runner so tests record the calls; detection of a running systemd; the message
 * left for the operator where there is none.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { BackendUnreachableError, BackendWriteError } from '../backend.js';

/** What one `systemctl` call returned. */
export interface SystemctlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `systemctl` with `args` (no shell). Injected by tests to record the calls. */
export type SystemctlRunner = (args: readonly string[]) => Promise<SystemctlResult>;

/** The real `systemctl`, through `execFile` (no shell); a missing binary is exit code 127. */
export const execSystemctl: SystemctlRunner = (args) =>
  new Promise((resolve) => {
    execFile('systemctl', [...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 127;
      resolve({
        code,
        stdout: String(stdout),
        stderr: err && !stderr ? err.message : String(stderr),
      });
    });
  });

function onPath(command: string): boolean {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** sd_booted(3): systemd is PID 1 when `/run/systemd/system` exists; plus `systemctl` on PATH. */
export function detectSystemd(): boolean {
  return existsSync('/run/systemd/system') && onPath('systemctl');
}

/**
 * Runs one `systemctl` command.
 * @throws {BackendUnreachableError} when systemd's bus cannot be reached.
 * @throws {BackendWriteError} for any other failure, with systemctl's message.
 */
export async function runSystemctl(
  runner: SystemctlRunner,
  args: readonly string[],
): Promise<void> {
  const r = await runner(args);
  if (r.code === 0) return;
  const detail = `systemctl ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim()}`;
  if (/Failed to connect to bus|not been booted with systemd|Failed to get D-Bus/i.test(r.stderr)) {
    throw new BackendUnreachableError(detail);
  }
  throw new BackendWriteError(detail);
}

/** The message for the operator when files changed on a host where systemd is not running. */
export function noSystemdNotice(
  unitDir: string,
  created: readonly string[],
  deleted: readonly string[],
  restarted: readonly string[],
): string {
  const steps = [
    'systemctl daemon-reload',
    ...(created.length > 0 ? [`systemctl enable --now ${created.join(' ')}`] : []),
    ...(restarted.length > 0 ? [`systemctl try-restart ${restarted.join(' ')}`] : []),
  ];
  const removed =
    deleted.length > 0
      ? ` Removed without \`systemctl disable\`: ${deleted.join(' ')} (delete their links in ` +
        'timers.target.wants/ if they were enabled).'
      : '';
  return (
    `systemd is not running on this host (no /run/systemd/system, or no systemctl): the unit ` +
    `files in ${unitDir} were written, but no systemctl command was run. Where systemd runs ` +
    `them: ${steps.join(' && ')}.${removed}`
  );
}
