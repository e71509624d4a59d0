/**
 * Host-scope locks (SPEC §5.5): a non-blocking exclusive `flock(2)` on
 * `<dir>/<key>.lock`. The kernel is the only arbiter and releases the lock
 * when the holding process dies, so a crashed shim never leaks it and there is
 * no TTL. The holder record sits beside it in `<dir>/<key>.holder`, replaced
 * atomically (temp file + rename) and removed on release.
 *
 * Lock files are never deleted: unlinking a lock file lets a second process
 * lock a fresh inode while a first still holds the old one.
 */
import { closeSync, constants, openSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { flockSync } from 'fs-ext';
import { writeFileAtomic } from '../io/atomic.js';
import { ensureDirSync } from '../io/dirs.js';
import { decodeHolder, encodeHolder, validateLockKey } from './codec.js';
import {
  type AcquireOptions,
  type AcquireResult,
  type Holder,
  type Lease,
  type LockBackend,
  LockConfigError,
  LockUnavailableError,
} from './types.js';

/** Errno codes that mean "this path cannot be used": a configuration problem (exit 3). */
const CONFIG_CODES = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'ENOENT',
  'EISDIR',
  'ELOOP',
  'ENAMETOOLONG',
  'EEXIST',
]);

const FIX = 'pass --lock-dir or set CRONIX_LOCK_DIR to a writable local directory';

function errnoCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    return err.code;
  }
  return err instanceof Error ? err.message : String(err);
}

function errnoPath(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'path' in err && typeof err.path === 'string') {
    return err.path;
  }
  return undefined;
}

const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * Maps a file-system failure to LockConfigError (the path cannot work: exit 3)
 * or LockUnavailableError (transient, e.g. EMFILE or ENOSPC: exit 75).
 */
function fsError(dir: string, op: string, target: string, err: unknown): Error {
  const code = errnoCode(err);
  if (CONFIG_CODES.has(code)) {
    const state = NOT_WRITABLE.has(code) ? 'not writable' : 'not usable';
    return new LockConfigError(`lock dir ${dir} is ${state} (${code}: ${op} ${target}); ${FIX}`, {
      cause: err,
    });
  }
  return new LockUnavailableError(`lock dir ${dir}: ${op} ${target} failed (${code})`, {
    cause: err,
  });
}

function readHolderFile(file: string): Holder | null {
  try {
    return decodeHolder(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** A held flock: the open file descriptor is the lock. */
class FlockLease implements Lease {
  readonly fencingToken = undefined;
  #fd: number | undefined;

  constructor(
    readonly key: string,
    fd: number,
    private readonly holderFile: string,
    private readonly holder: Holder,
    private readonly onRelease: (lease: FlockLease) => void,
  ) {
    this.#fd = fd;
  }

  /** True while the descriptor is open: a kernel lock has no TTL to extend. */
  refresh(): Promise<boolean> {
    return Promise.resolve(this.#fd !== undefined);
  }

  /** Removes our holder record, unlocks and closes; true the first time only. */
  release(): Promise<boolean> {
    const fd = this.#fd;
    if (fd === undefined) return Promise.resolve(false);
    this.#fd = undefined;
    this.onRelease(this);
    // Still locked, so nobody else can be writing the sidecar: if it is ours, drop it.
    const current = readHolderFile(this.holderFile);
    if (
      current !== null &&
      current.pid === this.holder.pid &&
      current.host === this.holder.host &&
      current.acquiredAt === this.holder.acquiredAt
    ) {
      try {
        unlinkSync(this.holderFile);
      } catch {
        // Advisory record: a leftover is overwritten by the next holder.
      }
    }
    try {
      flockSync(fd, 'un');
    } finally {
      closeSync(fd); // closing releases the lock even if the explicit unlock failed
    }
    return Promise.resolve(true);
  }
}

/**
 * Host-scope {@link LockBackend} on `flock(2)` (via `fs-ext`). One instance per
 * lock directory; safe to share within a process (each acquisition opens its
 * own file description, so two acquisitions of one key in one process contend
 * exactly as two processes would).
 */
export class FlockBackend implements LockBackend {
  /** Always `host`: a flock is visible to this kernel only. */
  readonly scope = 'host' as const;
  /** The lock directory, as given. */
  readonly dir: string;
  readonly #leases = new Set<FlockLease>();
  #closed = false;

  /**
   * @param dir lock directory (`--lock-dir`, `$CRONIX_LOCK_DIR`, else
   *   `/var/lock/cronix`); created with mode 0755 on first acquisition. It must
   *   be on a local file system (flock over NFS is not a host lock).
   */
  constructor(dir: string) {
    this.dir = dir;
  }

  /** Path of the lock file of `key`. */
  lockFile(key: string): string {
    validateLockKey(key);
    return path.join(this.dir, `${key}.lock`);
  }

  /** Path of the holder sidecar of `key`. */
  holderFile(key: string): string {
    validateLockKey(key);
    return path.join(this.dir, `${key}.holder`);
  }

  /**
   * Tries once, without waiting, to take an exclusive flock on
   * `<dir>/<key>.lock`; on success writes the holder sidecar. `ttlMs` is
   * ignored: the kernel releases the lock when the process exits.
   * @throws {LockConfigError} for an invalid key or an unusable lock directory.
   * @throws {LockUnavailableError} for transient failures (EMFILE, ENOSPC, ENOLCK…).
   */
  async acquire(key: string, options: AcquireOptions): Promise<AcquireResult> {
    return this.#acquire(key, options);
  }

  #acquire(key: string, options: AcquireOptions): AcquireResult {
    if (this.#closed) throw new LockUnavailableError('flock backend is closed');
    const lockFile = this.lockFile(key);
    const holderFile = this.holderFile(key);
    try {
      ensureDirSync(this.dir);
    } catch (err) {
      throw fsError(this.dir, 'mkdir', errnoPath(err) ?? this.dir, err);
    }
    let fd: number;
    try {
      fd = openSync(lockFile, constants.O_RDWR | constants.O_CREAT, 0o644);
    } catch (err) {
      throw fsError(this.dir, 'open', lockFile, err);
    }
    try {
      flockSync(fd, 'exnb');
    } catch (err) {
      closeSync(fd);
      const code = errnoCode(err);
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
        return { ok: false, reason: 'contended', holder: readHolderFile(holderFile) };
      }
      throw new LockUnavailableError(`flock ${lockFile} failed (${code})`, { cause: err });
    }
    try {
      this.#writeHolder(holderFile, options.holder);
    } catch (err) {
      closeSync(fd); // closing the only descriptor releases the flock
      throw fsError(this.dir, 'write', holderFile, err);
    }
    const lease = new FlockLease(key, fd, holderFile, options.holder, (l) =>
      this.#leases.delete(l),
    );
    this.#leases.add(lease);
    return { ok: true, lease };
  }

  /** Writes the sidecar atomically: a temp file in the same directory, then rename(2). */
  #writeHolder(holderFile: string, holder: Holder): void {
    writeFileAtomic(holderFile, `${encodeHolder(holder)}\n`, 0o644);
  }

  /** Reads the holder sidecar of `key`; null when missing or unparsable. */
  async holder(key: string): Promise<Holder | null> {
    return readHolderFile(this.holderFile(key));
  }

  /** Releases every lease still held through this backend; later acquisitions reject. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const lease of [...this.#leases]) await lease.release();
  }
}
