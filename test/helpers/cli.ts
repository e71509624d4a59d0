import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The built CLI entry (`npm test` builds before running the suite); `CRONIX_TEST_CLI` points
 * the tests at another build (an older commit, to show a test fails there).
 */
export const CLI =
  process.env['CRONIX_TEST_CLI'] ??
  fileURLToPath(new URL('../../dist/bin/cronix.mjs', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `cronix` binary with arguments, returning its exit status and output. */
export function cronix(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): CliResult {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first`);
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? process.env,
    input: options.input,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Like {@link cronix}, without blocking this process (for a daemon running in the test itself). */
export function cronixAsync(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
