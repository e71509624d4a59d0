/**
 * Files and directories that must stay private to this user: the daemon's data dir (its ledger,
 * token, session state and run output) and token files. Like ssh with its keys, a token file
 * that others can read is refused, and a data dir that others can enter is made private when
 * this user owns it (else the caller is told why it cannot be).
 */
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** Bits of a mode that give the group or others any access. */
const OTHERS = 0o077;

/** `0755` as text. */
export const modeText = (mode: number): string => `0${(mode & 0o777).toString(8)}`;

/** A problem with a private path, as one line naming the path and the fix. */
export class PrivatePathError extends Error {
  constructor(
    message: string,
    /** The errno code behind it, when there is one (`ENOENT`, `EACCES`, …). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** What {@link ensurePrivateDir} did. */
export interface PrivateDir {
  /** The directory did not exist and was made (mode 0700). */
  created: boolean;
  /** Set when the directory stays open to others: why, and what to do. */
  warning?: string;
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // some file systems refuse fsync on a directory; the entry is written all the same
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Makes `dir` (and missing parents) with mode 0700, or narrows an existing one to 0700 when
 * this user owns it. A directory owned by someone else keeps its mode and comes back with a
 * warning. A new directory's entry is fsynced in its parent, so it survives a power cut.
 * @throws the errno error of mkdir or stat (`code` set), or {@link PrivatePathError} when
 *   `dir` exists and is not a directory.
 */
export function ensurePrivateDir(dir: string): PrivateDir {
  let created = false;
  try {
    mkdirSync(dir, { mode: 0o700 });
    created = true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      created = true;
    } else if (code !== 'EEXIST') throw err;
  }
  const st = statSync(dir);
  if (!st.isDirectory()) throw new PrivatePathError(`${dir} is not a directory`, 'ENOTDIR');
  if (created) {
    fsyncDir(dirname(dir));
    return { created };
  }
  if ((st.mode & OTHERS) === 0) return { created };
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    return {
      created,
      warning: `data dir ${dir} is open to other users (mode ${modeText(st.mode)}) and belongs to uid ${st.uid}, not this user (uid ${uid}), so cronix cannot make it private; its ledger and run output may be readable by others: run "chmod 700 ${dir}" as its owner`,
    };
  }
  try {
    chmodSync(dir, 0o700);
  } catch (err) {
    return {
      created,
      warning: `data dir ${dir} is open to other users (mode ${modeText(st.mode)}) and could not be made private (${(err as NodeJS.ErrnoException).code ?? String(err)}); run "chmod 700 ${dir}"`,
    };
  }
  return { created };
}

/** Largest private file read (a token is one short line). */
export const MAX_PRIVATE_FILE_BYTES = 4096;

/**
 * Reads a small private file (a token): only a regular file, at most
 * {@link MAX_PRIVATE_FILE_BYTES}, and only when neither its group nor others can read or write
 * it. `what` names it in messages ("token file").
 * @throws {PrivatePathError} naming the path and the fix; `code` is `ENOENT` for a missing
 *   file, so the caller can say how to create one.
 */
export function readPrivateFile(path: string, what: string): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO named as a token file must not hang the start
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new PrivatePathError(`cannot read ${what} ${path}: ${code}`, code);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new PrivatePathError(`${what} ${path} is not a regular file`, 'EINVAL');
    if ((st.mode & OTHERS) !== 0) {
      const who =
        (st.mode & 0o070) !== 0 && (st.mode & 0o007) !== 0
          ? 'its group and other users'
          : (st.mode & 0o070) !== 0
            ? 'its group'
            : 'other users';
      throw new PrivatePathError(
        `${what} ${path} is open to ${who} (mode ${modeText(st.mode)}); it must be private to this user, like an ssh key: run "chmod 600 ${path}"`,
        'EPERM',
      );
    }
    if (st.size > MAX_PRIVATE_FILE_BYTES)
      throw new PrivatePathError(
        `${what} ${path} holds ${st.size} bytes; expected one line of at most ${MAX_PRIVATE_FILE_BYTES}`,
        'EFBIG',
      );
    const buf = Buffer.alloc(MAX_PRIVATE_FILE_BYTES + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Narrows the files `names` of `dir` to mode 0600 where this user owns them and others have any
 * access (a ledger SQLite created under a umask of 022 is 0644; SQLite gives its `-wal` and
 * `-shm` files the mode of the database). Missing files are skipped.
 * @returns the files that stay open to others (owned by someone else, or chmod refused)
 */
export function narrowFiles(dir: string, names: readonly string[]): string[] {
  const open: string[] = [];
  const uid = process.getuid?.();
  for (const name of names) {
    const path = join(dir, name);
    let st;
    try {
      st = statSync(path);
    } catch {
      continue;
    }
    if (!st.isFile() || (st.mode & OTHERS) === 0) continue;
    if (uid !== undefined && st.uid !== uid) {
      open.push(path);
      continue;
    }
    try {
      chmodSync(path, 0o600);
    } catch {
      open.push(path);
    }
  }
  return open;
}
