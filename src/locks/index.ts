/**
 * The lock room (SPEC §5.5): one {@link LockBackend} interface, a host-scope
 * flock backend and a global-scope Redis backend. See docs/locks.md.
 */
export {
  type AcquireOptions,
  type AcquireResult,
  type Holder,
  type Lease,
  type LockBackend,
  LockConfigError,
  LockUnavailableError,
} from './types.js';
export { FlockBackend } from './flock.js';
export {
  DEFAULT_DONE_TTL_SECONDS,
  DEFAULT_REDIS_PREFIX,
  DEFAULT_REDIS_TIMEOUT_MS,
  RedisBackend,
  type RedisBackendOptions,
} from './redis.js';
export {
  DEFAULT_REDIS_PORT,
  type RedisTarget,
  parseRedisUrl,
  redactRedisUrl,
} from './redis-url.js';
export { MAX_LOCK_KEY_LENGTH, decodeHolder, encodeHolder, validateLockKey } from './codec.js';
export { hostIdentity } from './host.js';
