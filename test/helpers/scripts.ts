/**
 * Shell scripts for command-job tests (real processes): each is written into a temp dir and
 * made executable. The scripts report pids through files so a test can check afterwards that
 * every process of a job is gone.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readStat } from '../../src/fire/process-group.js';

/** A fresh temp dir for scripts and their pid files. */
export function scriptDir(prefix = 'cronix-cmd-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes an executable `#!/bin/sh` script `name` into `dir`; returns its path. */
export function script(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/**
 * A script that traps SIGTERM (logs it, then keeps running) and starts a grandchild that
 * ignores SIGTERM; both write their pids to `<out>/leader.pid` and `<out>/grandchild.pid`,
 * where `<out>` is the script's first argument, else `dir`. Neither exits on its own for
 * `seconds`.
 */
export function stubbornScript(dir: string, seconds = 300): string {
  return script(
    dir,
    'stubborn.sh',
    [
      `out=\${1:-${dir}}`,
      // the trap before the pid file: a test that reads the pid may send SIGTERM at once
      `trap 'echo leader got TERM' TERM`,
      `echo $$ > $out/leader.pid`,
      `out=$out sh -c 'trap "" TERM; echo $$ > $out/grandchild.pid; exec sleep ${seconds}' &`,
      `echo started`,
      // sleep in short steps so the trap runs and the leader stays alive
      `i=0; while [ $i -lt ${seconds * 10} ]; do sleep 0.1; i=$((i+1)); done`,
    ].join('\n'),
  );
}

/** Reads a pid file written by a script, waiting up to `ms` for it. */
export async function readPid(path: string, ms = 5_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (existsSync(path)) {
      const text = readFileSync(path, 'utf8').trim();
      if (/^\d+$/.test(text)) return Number(text);
    }
    if (Date.now() > deadline) throw new Error(`no pid in ${path}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a pid is a live process (a zombie counts as gone). */
export function alive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
}
