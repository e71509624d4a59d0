/**
 * The machine's one cron daemon, shared by the tests that need a real one (Debian's `cron`
 * keeps one daemon per machine: its pid file and spool are global). A test takes the cron lock
 * for its whole run — an exclusive `flock(2)` on a file in the temp dir, held by this process —
 * so two such test files (in two Vitest workers) never start, rely on or stop the daemon at the
 * same time; then it starts `cron -f` when none runs, and stops only the one it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flockSync } from 'fs-ext';

/** Debian's cron binary, if installed. */
export const CRON = ['/usr/sbin/cron', '/usr/bin/cron'].find((p) => existsSync(p));

/** Pids of running processes named `cron`. */
export function cronPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // "<pid> (<comm>) <state> …": a zombie (Z) is not a running daemon
      if (/^\d+ \(cron\) [^Z]/.test(stat)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A cron daemon this test may rely on until `release`. */
export interface CronHold {
  /**
   * Stops the daemon (SIGTERM, waits for its exit), to see what happens when cron is down.
   * Throws when a daemon this test did not start is running: another's daemon is never stopped.
   */
  stop(): Promise<void>;
  /** Starts `cron -f` again after {@link stop}. */
  start(): Promise<void>;
  release(): Promise<void>;
}

async function startCron(): Promise<ChildProcess> {
  const child = spawn(CRON as string, ['-f'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  if (child.exitCode !== null) throw new Error('cron -f exited at once');
  return child;
}

async function stopCron(child: ChildProcess | undefined): Promise<void> {
  if (child?.pid === undefined || child.exitCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await gone;
}

/**
 * Waits for the cron lock, then makes sure a cron daemon runs (starting one if none does). With
 * `start: false` a daemon is not started yet: `start()` does, once the test has written its
 * cron.d file (the daemon reads it at start-up, instead of at its next minute's check).
 */
export async function holdCron(options: { start?: boolean } = {}): Promise<CronHold> {
  const fd = openSync(join(tmpdir(), 'cronix-test-cron.lock'), 'a');
  for (;;) {
    try {
      flockSync(fd, 'exnb');
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      await new Promise((r) => setTimeout(r, 200)); // another test file has the cron daemon
    }
  }
  let started: ChildProcess | undefined;
  const owned = cronPids().length === 0;
  if (owned && options.start !== false) started = await startCron();
  return {
    async stop() {
      if (!owned) {
        throw new Error(
          `a cron daemon this test did not start is running (pids ${cronPids().join(', ')}); stop it to run this test`,
        );
      }
      await stopCron(started);
    },
    async start() {
      if (
        owned &&
        (started === undefined || started.exitCode !== null || started.signalCode !== null)
      )
        started = await startCron();
    },
    async release() {
      if (owned) await stopCron(started);
      closeSync(fd); // the lock goes with the descriptor
    },
  };
}
