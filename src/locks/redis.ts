/**
 * Global-scope locks (SPEC §5.5) on Redis, fail closed. Keys (prefix default
 * `cronix:`):
 *
 * - `<prefix>lock:<key>`: random 128-bit token of the holder, `SET NX PX ttl`;
 * - `<prefix>fence:<key>`: the last fencing token, raised on every acquisition
 *   to `max(previous + 1, server clock in µs)`, so tokens keep increasing even
 *   across a loss of Redis data; never expires;
 * - `<prefix>holder:<key>`: holder JSON, same TTL as the lock;
 * - `<prefix>done:<run key>`, `<prefix>last-success:<key>`: duplicate
 *   suppression (§5.8).
 *
 * Acquire, refresh and release are single Lua scripts (`redis-scripts.ts`):
 * refresh and release act only while the stored token is still ours, so a
 * holder whose lease expired can never extend or delete its successor's.
 * Any connection problem rejects with {@link LockUnavailableError}; nothing
 * is queued or retried behind the caller's back.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { decodeHolder, encodeHolder, validateLockKey } from './codec.js';
import { LOCK_SCRIPTS } from './redis-scripts.js';
import { parseRedisUrl } from './redis-url.js';
import { type Reply, ReplyError, RespConnection } from './resp.js';
import {
  type AcquireOptions,
  type AcquireResult,
  type Holder,
  type Lease,
  type LockBackend,
  LockConfigError,
  LockUnavailableError,
} from './types.js';

export { parseRedisUrl, redactRedisUrl, type RedisTarget } from './redis-url.js';

/** Options of {@link RedisBackend.connect}. */
export interface RedisBackendOptions {
  /** Prefix of every key (the shim passes `$CRONIX_REDIS_PREFIX`); default `cronix:`. */
  prefix?: string;
  /** Deadline for connecting (TCP, TLS, AUTH, SELECT), ms; default 2000. */
  connectTimeoutMs?: number;
  /** Deadline for each command, ms; default 2000. A timed-out command fails closed. */
  commandTimeoutMs?: number;
}

/** Default key prefix. */
export const DEFAULT_REDIS_PREFIX = 'cronix:';
/** Default connect and command deadline, ms. */
export const DEFAULT_REDIS_TIMEOUT_MS = 2000;
/** Default lifetime of a `done:<run key>` marker: 30 days. */
export const DEFAULT_DONE_TTL_SECONDS = 30 * 86_400;

/** Reply errors that no retry will fix: credentials, ACLs, foreign data under our keys. */
const CONFIG_REPLY = /^(WRONGPASS|NOAUTH|NOPERM|WRONGTYPE|ERR DB index|ERR invalid password)/;

function replyText(err: unknown): string | undefined {
  return err instanceof ReplyError ? err.message : undefined;
}

function reason(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    // a socket error's message repeats its code with the address; a TLS one says more
    // (DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed certificate")
    const message = err instanceof Error ? err.message : '';
    return message === '' || message.includes(err.code) ? err.code : `${err.code} (${message})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The connection shared by a backend and its leases. */
interface Link {
  redis: RespConnection;
  endpoint: string;
}

/** Runs one command; maps every failure to LockUnavailableError or LockConfigError. */
async function call<T>(link: Link, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const reply = replyText(err);
    if (reply !== undefined && CONFIG_REPLY.test(reply)) {
      throw new LockConfigError(`redis at ${link.endpoint} refused ${what}: ${reply}`, {
        cause: err,
      });
    }
    const lastError = link.redis.lastError;
    const last =
      lastError === undefined || lastError === err ? '' : ` (last error: ${reason(lastError)})`;
    throw new LockUnavailableError(
      `redis at ${link.endpoint} unavailable during ${what}: ${reply ?? reason(err)}${last}`,
      { cause: err },
    );
  }
}

/** A held Redis lock, identified by its random token. */
class RedisLease implements Lease {
  #released = false;

  constructor(
    readonly key: string,
    readonly fencingToken: number,
    private readonly link: Link,
    private readonly keys: { lock: string; holder: string },
    private readonly token: string,
    private readonly ttlMs: number,
  ) {}

  /** Extends lock and holder to `ttlMs` from now; false once the lock is not ours. */
  async refresh(): Promise<boolean> {
    if (this.#released) return false;
    const { redis } = this.link;
    const { lock, holder } = this.keys;
    const r = await call(this.link, 'refresh', () =>
      redis.eval(LOCK_SCRIPTS.refresh, [lock, holder], [this.token, this.ttlMs]),
    );
    return r === 1;
  }

  /** Deletes lock and holder if still ours; false if not (expired, taken, released). */
  async release(): Promise<boolean> {
    if (this.#released) return false;
    const { redis } = this.link;
    const { lock, holder } = this.keys;
    const r = await call(this.link, 'release', () =>
      redis.eval(LOCK_SCRIPTS.release, [lock, holder], [this.token]),
    );
    this.#released = true; // only after a definite answer, so a failed release can be retried
    return r === 1;
  }
}

/** A GET's answer: the string, or null for a missing key (or anything else). */
function asText(reply: Reply): string | null {
  return typeof reply === 'string' ? reply : null;
}

function connectFailure(endpoint: string, err: unknown): Error {
  const reply = replyText(err);
  if (reply !== undefined) {
    const code = reply.split(' ', 1)[0] ?? reply;
    // every refusal of the hello is the configuration's, except a server at its client limit
    if (/^(WRONGPASS|NOAUTH|NOPERM|ERR)/.test(reply) && !/^ERR max number of clients/.test(reply)) {
      return new LockConfigError(
        `redis at ${endpoint} rejected the connection (${code}): check the user, password and ` +
          `database in the redis URL (--lock-backend or CRONIX_REDIS_URL)`,
        { cause: err },
      );
    }
    return new LockUnavailableError(`redis at ${endpoint} unavailable: ${code}`, { cause: err });
  }
  return new LockUnavailableError(`redis at ${endpoint} unreachable: ${reason(err)}`, {
    cause: err,
  });
}

/**
 * Switches the connection to logical database `db`, or fails: a database the
 * server does not have is a LockConfigError (exit 3), never a silent db 0.
 */
async function selectDb(link: Link, db: number): Promise<void> {
  try {
    await call(link, `select db ${db}`, () => link.redis.call('SELECT', db));
  } catch (err) {
    link.redis.disconnect();
    if (err instanceof LockConfigError && /ERR DB index/.test(err.message)) {
      throw new LockConfigError(
        `redis at ${link.endpoint} has no database ${db} (ERR DB index is out of range): ` +
          `check the /db part of the redis URL (--lock-backend or CRONIX_REDIS_URL)`,
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * Global-scope {@link LockBackend} on one Redis server (standalone; not
 * Cluster). Create it with {@link RedisBackend.connect}; one connection per
 * backend, closed by {@link RedisBackend.close}.
 */
export class RedisBackend implements LockBackend {
  /** Always `global`: every host sees the same Redis. */
  readonly scope = 'global' as const;
  /** The key prefix in use. */
  readonly prefix: string;
  readonly #link: Link;

  private constructor(link: Link, prefix: string) {
    this.#link = link;
    this.prefix = prefix;
  }

  /** `host:port` of the server, for logs (never carries credentials). */
  get endpoint(): string {
    return this.#link.endpoint;
  }

  /**
   * Whether the connection is up and answering (no command past its deadline unanswered). It
   * never reconnects by itself (a shim lives for one fire); a long-lived user such as the
   * daemon opens a new backend when this turns false.
   */
  get connected(): boolean {
    return this.#link.redis.healthy;
  }

  /**
   * Connects to the Redis at `url`, failing fast and closed: no offline queue,
   * no reconnection, no per-request retry.
   * @throws {LockConfigError} for a malformed URL (message redacted) or
   *   rejected credentials / database.
   * @throws {LockUnavailableError} when the server cannot be reached within
   *   `connectTimeoutMs` ("redis at h:6379 unreachable: ECONNREFUSED").
   */
  static async connect(url: string, options: RedisBackendOptions = {}): Promise<RedisBackend> {
    const target = parseRedisUrl(url);
    const endpoint = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
    let redis: RespConnection;
    try {
      redis = await RespConnection.open({
        host: target.host,
        port: target.port,
        tls: target.tls ? (isIP(target.host) ? {} : { servername: target.host }) : undefined,
        username: target.username,
        password: target.password,
        connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
        commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
      });
    } catch (err) {
      throw connectFailure(endpoint, err);
    }
    const link: Link = { redis, endpoint };
    if (target.db !== 0) await selectDb(link, target.db);
    return new RedisBackend(link, options.prefix ?? DEFAULT_REDIS_PREFIX);
  }

  #key(kind: 'lock' | 'fence' | 'holder' | 'done' | 'last-success', id: string): string {
    return `${this.prefix}${kind}:${id}`;
  }

  /**
   * Tries once to take `key` for `ttlMs` (one Lua script: SET NX PX, raise the
   * fence, store the holder). The lease carries the new fencing token.
   * @throws {LockUnavailableError} when Redis cannot be reached.
   * @throws {LockConfigError} for an invalid key or `ttlMs`.
   */
  async acquire(key: string, options: AcquireOptions): Promise<AcquireResult> {
    validateLockKey(key);
    if (!Number.isFinite(options.ttlMs) || options.ttlMs < 1) {
      throw new LockConfigError(`lock TTL must be a positive number of ms, got ${options.ttlMs}`);
    }
    const ttlMs = Math.ceil(options.ttlMs);
    const token = randomBytes(16).toString('hex');
    const keys = { lock: this.#key('lock', key), holder: this.#key('holder', key) };
    const { redis } = this.#link;
    const reply = await call(this.#link, 'acquire', () =>
      redis.eval(
        LOCK_SCRIPTS.acquire,
        [keys.lock, this.#key('fence', key), keys.holder],
        [token, ttlMs, encodeHolder(options.holder)],
      ),
    );
    const [ok, value] = Array.isArray(reply) ? reply : [];
    if ((ok !== 0 && ok !== 1) || (ok === 1 && !Number.isSafeInteger(value))) {
      throw new LockUnavailableError(
        `redis at ${this.endpoint} answered the acquire script with ${JSON.stringify(reply).slice(0, 80)}`,
      );
    }
    if (ok !== 1) {
      return { ok: false, reason: 'contended', holder: decodeHolder(String(value)) };
    }
    const lease = new RedisLease(key, Number(value), this.#link, keys, token, ttlMs);
    return { ok: true, lease };
  }

  /** Reads the holder recorded for `key`; null if none (free, or holder unparsable). */
  async holder(key: string): Promise<Holder | null> {
    validateLockKey(key);
    const { redis } = this.#link;
    const text = await call(this.#link, 'holder', () =>
      redis.call('GET', this.#key('holder', key)),
    );
    return decodeHolder(asText(text));
  }

  /**
   * Records that run `runKey` of lock key `lockKey` succeeded at
   * `successTimeMs`: `done:<runKey>` (expires after `ttlSeconds`) and
   * `last-success:<lockKey>` (unix seconds; only moves forward, no expiry).
   * @throws {LockUnavailableError} when Redis cannot be reached.
   */
  async markSucceeded(
    runKey: string,
    successTimeMs: number,
    lockKey: string,
    ttlSeconds = DEFAULT_DONE_TTL_SECONDS,
  ): Promise<void> {
    validateLockKey(lockKey);
    if (runKey === '') throw new LockConfigError('run key is empty');
    const { redis } = this.#link;
    await call(this.#link, 'markSucceeded', () =>
      redis.eval(
        LOCK_SCRIPTS.markSucceeded,
        [this.#key('done', runKey), this.#key('last-success', lockKey)],
        [Math.floor(successTimeMs / 1000), Math.max(1, Math.ceil(ttlSeconds))],
      ),
    );
  }

  /**
   * True when {@link markSucceeded} recorded `runKey` (within its TTL).
   * @throws {LockUnavailableError} when Redis cannot be reached.
   */
  async hasSucceeded(runKey: string): Promise<boolean> {
    const { redis } = this.#link;
    const n = await call(this.#link, 'hasSucceeded', () =>
      redis.call('EXISTS', this.#key('done', runKey)),
    );
    return n === 1;
  }

  /**
   * Last recorded success of `lockKey`, epoch ms (whole seconds), or null.
   * @throws {LockUnavailableError} when Redis cannot be reached.
   */
  async lastSuccess(lockKey: string): Promise<number | null> {
    validateLockKey(lockKey);
    const { redis } = this.#link;
    const text = asText(
      await call(this.#link, 'lastSuccess', () =>
        redis.call('GET', this.#key('last-success', lockKey)),
      ),
    );
    const seconds = text === null ? NaN : Number(text);
    return Number.isFinite(seconds) ? seconds * 1000 : null;
  }

  /** Closes the connection (QUIT, or a hard disconnect if that fails). Leases left expire by TTL. */
  async close(): Promise<void> {
    await this.#link.redis.quit();
  }
}
