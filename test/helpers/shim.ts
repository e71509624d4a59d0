/**
 * Running the real `cronix trigger` binary as a child process against spec
 * files written into a temp dir, the way a host scheduler would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseManifest } from '../../src/contract/manifest/index.js';
import type { Job } from '../../src/contract/manifest/types.js';
import { CLI } from './cli.js';

/** The signing secret every spawned shim gets as `CRON_SECRET` (at least 16 bytes, as required). */
export const TEST_SECRET = 'test-secret-0123456789';

/** Temp dirs of one shim "host". */
export interface ShimDirs {
  root: string;
  specDir: string;
  lockDir: string;
  stateDir: string;
}

/** Fresh spec/lock/state dirs under a new temp root. */
export function shimDirs(prefix = 'cronix-shim-'): ShimDirs {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const dirs = {
    root,
    specDir: join(root, 'jobs'),
    lockDir: join(root, 'lock'),
    stateDir: join(root, 'state'),
  };
  mkdirSync(dirs.specDir);
  return dirs;
}

/** A job as the manifest would declare it; normalized through the real parser. */
export function normalizedJob(app: string, raw: Record<string, unknown>): Job {
  const r = parseManifest({ version: 1, app, jobs: [raw] });
  if (!r.ok) throw new Error(`test job is invalid: ${JSON.stringify(r.errors)}`);
  return r.manifest.jobs[0] as Job;
}

/** Writes `<specDir>/<app>.<job>.json` as `cronix apply` does (`extra`: more top-level keys). */
export function writeSpec(
  specDir: string,
  app: string,
  job: Job | Record<string, unknown>,
  extra: { schedule_index?: number; secret_refs?: string[]; [key: string]: unknown } = {},
): string {
  const path = join(specDir, `${app}.${(job as { name: string }).name}.json`);
  const { schedule_index, secret_refs, ...more } = extra;
  writeFileSync(
    path,
    JSON.stringify({
      app,
      schedule_index: schedule_index ?? 0,
      secret_refs: secret_refs ?? ['env:CRON_SECRET'],
      job,
      ...more,
    }),
    { mode: 0o640 },
  );
  return path;
}

/** One finished shim run. */
export interface ShimRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON lines (lines that are not JSON make the test fail). */
  lines: Record<string, unknown>[];
  /** The `performance.now()` of this process when the child was spawned. */
  spawnedAtPerf: number;
}

/** A started shim; `done` resolves when it exits. */
export interface ShimChild {
  child: ChildProcess;
  done: Promise<ShimRun>;
  /** Everything the shim has written to stdout so far (collected from spawn on). */
  stdout: () => string;
}

/** Spawns `cronix trigger <target> ...args` with `env` on top of a clean environment. */
export function startShim(
  target: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): ShimChild {
  return startTrigger([target, ...args], env);
}

/** Spawns `cronix trigger ...argv` (any arguments, even none) with `env` on a clean environment. */
export function startTrigger(
  argv: string[],
  env: Record<string, string | undefined> = {},
): ShimChild {
  const spawnedAtPerf = performance.now();
  const child = spawn(process.execPath, [CLI, 'trigger', ...argv], {
    env: { PATH: process.env['PATH'], CRON_SECRET: TEST_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<ShimRun>((resolve) => {
    child.on('close', (code, signal) => {
      const lines = stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            return { unparsable: l };
          }
        });
      resolve({ code, signal, stdout, stderr, lines, spawnedAtPerf });
    });
  });
  return { child, done, stdout: () => stdout };
}

/** Runs a shim to completion. */
export function runShim(
  target: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<ShimRun> {
  return startShim(target, args, env).done;
}

/** The standard directory flags for `dirs`. */
export function dirArgs(dirs: ShimDirs): string[] {
  return ['--spec-dir', dirs.specDir, '--lock-dir', dirs.lockDir, '--state-dir', dirs.stateDir];
}

/** Events of a run's log lines, in order. */
export const events = (run: ShimRun): unknown[] => run.lines.map((l) => l['event']);
