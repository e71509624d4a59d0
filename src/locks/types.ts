/**
 * The lock seam (SPEC §5.5). One interface, two implementations: `flock.ts`
 * (host scope, kernel `flock(2)`) and `redis.ts` (global scope, Redis with a
 * fencing token). Both pass the shared contract suite in
 * `test/locks/contract.ts`.
 */

/** Who holds a lock: written beside it by the holder, read by `Replace`. */
export interface Holder {
  /** Process id of the holder on its host. */
  pid: number;
  /** Host identity (`$CRONIX_HOST_ID`, else the hostname). */
  host: string;
  /** When the lock was taken, epoch ms. */
  acquiredAt: number;
}

/** A held lock. Release it exactly once; refresh it while long work runs. */
export interface Lease {
  /** The lock key, e.g. `billing.settle-invoices`. */
  readonly key: string;
  /**
   * Monotonically increasing fencing token of this acquisition (global scope
   * only; undefined for host locks, where the kernel is the only arbiter).
   */
  readonly fencingToken: number | undefined;
  /**
   * Extends the lease's TTL to `ttlMs` from now. Resolves false when the lease
   * is no longer ours (expired and taken by someone else): the caller must stop.
   * @throws {LockUnavailableError} when the backend cannot be reached.
   */
  refresh(): Promise<boolean>;
  /**
   * Releases the lease if it is still ours. Resolves false when it was not
   * (expired, or already released); never releases another holder's lock.
   */
  release(): Promise<boolean>;
}

/** Result of {@link LockBackend.acquire}: a lease, or who is in the way. */
export type AcquireResult =
  { ok: true; lease: Lease } | { ok: false; reason: 'contended'; holder: Holder | null };

/** Options of one acquisition. */
export interface AcquireOptions {
  /** Lease time-to-live in ms (`timeout_seconds + 30 s`); ignored by flock. */
  ttlMs: number;
  /** Holder metadata stored beside the lock. */
  holder: Holder;
}

/** A lock backend: host (flock) or global (Redis). */
export interface LockBackend {
  /** `host` or `global`, for logs. */
  readonly scope: 'host' | 'global';
  /**
   * Tries once to take the lock `key` without waiting.
   * @throws {LockUnavailableError} when the backend cannot be reached (fail closed: do not fire).
   * @throws {LockConfigError} when it is misconfigured (e.g. an unwritable lock directory).
   */
  acquire(key: string, options: AcquireOptions): Promise<AcquireResult>;
  /** Reads the current holder of `key`, or null if none is recorded. */
  holder(key: string): Promise<Holder | null>;
  /** Closes connections; the backend is unusable afterwards. */
  close(): Promise<void>;
}

/** The lock backend is unreachable: the shim must not fire and exits 75. */
export class LockUnavailableError extends Error {
  override name = 'LockUnavailableError';
}

/** The lock backend is misconfigured (bad URL, unwritable directory): exit 3. */
export class LockConfigError extends Error {
  override name = 'LockConfigError';
}
