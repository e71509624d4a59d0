/**
 * Host-scope run state in the state dir (SPEC §5.8): which run keys already
 * succeeded on this host, and when the job last succeeded. One marker file
 * per succeeded run key (created with O_EXCL, so concurrent writers cannot
 * corrupt anything), pruned to the newest 1000.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic.js';
import { ensureDirSync } from '../io/dirs.js';

/**
 * Where a job's succeeded run keys and last success live: this host's state
 * dir for host scope, Redis for global scope.
 */
export interface RunRecords {
  hasSucceeded(runKey: string): boolean | Promise<boolean>;
  markSucceeded(runKey: string, atMs: number): void | Promise<void>;
  lastSuccess(): number | null | Promise<number | null>;
}

/** Succeeded run keys remembered per job. */
export const MAX_MARKERS = 1000;

/** A job's state folder `<state-dir>/<app>.<job>/`. */
export class HostState implements RunRecords {
  private readonly dir: string;
  private readonly markers: string;

  constructor(stateDir: string, target: string) {
    this.dir = join(stateDir, target);
    this.markers = join(this.dir, 'succeeded');
  }

  /**
   * Creates the folders. Throws an Error naming the path and the fix when the
   * state dir cannot be written (the shim exits 3: a configuration error).
   */
  ensure(): void {
    try {
      ensureDirSync(this.markers);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new Error(
        `state dir ${this.dir} is not writable (${code}); pass --state-dir or set CRONIX_STATE_DIR`,
      );
    }
  }

  private marker(runKey: string): string {
    return join(this.markers, createHash('sha256').update(runKey).digest('hex').slice(0, 40));
  }

  /** Whether `runKey` already succeeded on this host. */
  hasSucceeded(runKey: string): boolean {
    try {
      return readFileSync(this.marker(runKey), 'utf8') === runKey;
    } catch {
      return false;
    }
  }

  /** Records a success of `runKey` at `atMs`; prunes old markers. */
  markSucceeded(runKey: string, atMs: number): void {
    try {
      writeFileSync(this.marker(runKey), runKey, { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    writeFileAtomic(join(this.dir, 'last-success'), String(atMs));
    this.prune();
  }

  /** When the job last succeeded on this host, epoch ms, or null. */
  lastSuccess(): number | null {
    try {
      const n = Number(readFileSync(join(this.dir, 'last-success'), 'utf8'));
      return Number.isFinite(n) && n > 0 ? n : null;
    } catch {
      return null;
    }
  }

  private prune(): void {
    const names = readdirSync(this.markers);
    if (names.length <= MAX_MARKERS) return;
    const aged = names
      .map((name) => ({ name, mtime: statSync(join(this.markers, name)).mtimeMs }))
      .sort((a, b) => a.mtime - b.mtime);
    for (const { name } of aged.slice(0, aged.length - MAX_MARKERS))
      unlinkSync(join(this.markers, name));
  }

  /** Adds one to the job's fire counter and returns the new count (for the metrics textfile). */
  countFire(): number {
    const path = join(this.dir, 'fires');
    let n = 0;
    try {
      n = Number(readFileSync(path, 'utf8')) || 0;
    } catch {
      n = 0;
    }
    writeFileAtomic(path, String(n + 1));
    return n + 1;
  }
}
