/**
 * Where a crontab lives: the invoking user's crontab, read with `crontab -l` and installed with
 * `crontab -`, or a system file (`/etc/crontab`, `/etc/cron.d/<name>`, or any other path holding
 * the system format), replaced atomically with its mode kept.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { writeFileAtomic } from '../../io/atomic.js';
import { BackendConfigError, BackendUnreachableError, BackendWriteError } from '../backend.js';

/** A crontab to read and replace. */
export interface CrontabTarget {
  /** `user crontab (crontab -l)` or the file path. */
  readonly description: string;
  /** System format: cron lines carry a user field. */
  readonly system: boolean;
  /** The current text ('' when there is none). */
  read(): string;
  /** Replaces the whole text in one step. */
  write(text: string): void;
}

const CRON_D = '/etc/cron.d';
/** File names Debian's cron reads in /etc/cron.d (run-parts naming: no dots). */
const CRON_D_NAME = /^[A-Za-z0-9_-]+$/;

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}

/**
 * Checks `--crontab-path` and returns it absolute.
 * @throws {BackendConfigError} naming the problem and the fix.
 */
export function validateCrontabPath(path: string, cwd = process.cwd()): string {
  const abs = isAbsolute(path) ? path : resolve(cwd, path);
  if (abs.startsWith('/var/spool/cron/')) {
    throw new BackendConfigError(
      `--crontab-path ${abs} is a user crontab in cron's spool: omit --crontab-path and cronix edits the invoking user's crontab through crontab(1)`,
    );
  }
  if (dirname(abs) === CRON_D && !CRON_D_NAME.test(basename(abs))) {
    throw new BackendConfigError(
      `--crontab-path ${abs}: Debian's cron ignores files in /etc/cron.d whose names contain dots or characters other than letters, digits, "_" and "-"; use a name like /etc/cron.d/cronix`,
    );
  }
  return abs;
}

/** Whether cron reads `path` only when it is root-owned and not group/other-writable. */
function isCronSystemPath(path: string): boolean {
  return path === '/etc/crontab' || dirname(path) === CRON_D;
}

/** A system-format crontab file. */
export function fileTarget(path: string): CrontabTarget {
  const system = isCronSystemPath(path);
  return {
    description: path,
    system: true,
    read(): string {
      try {
        return readFileSync(path, 'utf8');
      } catch (err) {
        const c = code(err);
        if (c === 'ENOENT') {
          try {
            statSync(dirname(path));
          } catch {
            throw new BackendUnreachableError(
              `crontab directory ${dirname(path)} does not exist${dirname(path) === CRON_D ? ' (is cron installed? apt-get install cron)' : ''}; check --crontab-path`,
            );
          }
          return '';
        }
        throw new BackendWriteError(
          `cannot read crontab ${path}: ${c}; check --crontab-path and permissions`,
        );
      }
    },
    write(text: string): void {
      if (system && process.geteuid?.() !== 0) {
        throw new BackendWriteError(
          `cannot write ${path}: cron only reads it when it is owned by root, so cronix apply must run as root`,
        );
      }
      let mode = 0o644;
      try {
        mode = statSync(path).mode & 0o7777;
      } catch {
        // a new file
      }
      // cron ignores /etc/crontab and /etc/cron.d files writable by group or others
      if (system) mode = 0o644;
      try {
        if (text.trim() === '' && path !== '/etc/crontab') {
          unlinkSync(path);
          return;
        }
        writeFileAtomic(path, text, mode, { exactMode: true, fsync: true });
      } catch (err) {
        if (code(err) === 'ENOENT' && text.trim() === '') return;
        throw new BackendWriteError(
          `cannot write crontab ${path}: ${code(err)} (nothing was changed); check --crontab-path and permissions`,
        );
      }
    },
  };
}

/** How to run crontab(1): the binary, and extra leading arguments (tests: `-u user`). */
export interface CrontabCommand {
  bin: string;
  args: string[];
}

/** The invoking user's crontab through crontab(1). */
export function userTarget(cmd: CrontabCommand = { bin: 'crontab', args: [] }): CrontabTarget {
  const run = (args: string[], input?: string): ReturnType<typeof spawnSync> => {
    const r = spawnSync(cmd.bin, [...cmd.args, ...args], {
      input,
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (r.error !== undefined) {
      const c = code(r.error);
      throw new BackendUnreachableError(
        c === 'ENOENT'
          ? `crontab(1) is not installed (apt-get install cron), or pass --crontab-path for a system crontab file`
          : `crontab(1) failed to run: ${c}`,
      );
    }
    return r;
  };
  return {
    description: 'user crontab (crontab -l)',
    system: false,
    read(): string {
      const r = run(['-l']);
      if (r.status === 0) return String(r.stdout);
      const stderr = String(r.stderr).trim();
      if (/no crontab for/i.test(stderr)) return '';
      throw new BackendUnreachableError(`crontab -l failed (exit ${r.status}): ${stderr}`);
    },
    write(text: string): void {
      // nothing left (the last of our entries went): remove the crontab rather than leave an
      // empty one behind
      if (text.trim() === '') {
        const removed = run(['-r']);
        const stderr = String(removed.stderr).trim();
        if (removed.status === 0 || /no crontab for/i.test(stderr)) return;
        throw new BackendWriteError(
          `crontab -r failed (exit ${removed.status}): ${stderr} (the crontab holds no entries of cronix now)`,
        );
      }
      const r = run(['-'], text);
      if (r.status !== 0) {
        throw new BackendWriteError(
          `crontab - refused the new crontab (exit ${r.status}): ${String(r.stderr).trim()} (nothing was changed)`,
        );
      }
    },
  };
}
