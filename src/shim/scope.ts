/**
 * Where one fire's lock and run records live: host scope uses flock in the
 * lock dir and the state dir; global scope uses Redis for both (the lock, and
 * the record of succeeded run keys shared by every host). Both backends are
 * imported lazily: Redis costs start-up time and host-scope jobs never need it.
 */
import { LockConfigError, type LockBackend } from '../locks/types.js';
import type { HostState, RunRecords } from './state.js';

/** Where the lock and the run records of a scope live. */
export interface Scope {
  backend: LockBackend;
  records: RunRecords;
}

/** What {@link openScope} needs from the settings. */
export interface ScopeSettings {
  target: string;
  lockDir: string;
  redisUrl: string | undefined;
  redisPrefix: string;
}

/**
 * Opens the lock backend and run records of `scope`.
 * @throws {LockConfigError} for global scope without a Redis URL, a malformed
 *   URL, or credentials / a database the server rejects (exit 3).
 * @throws {LockUnavailableError} when Redis cannot be reached (exit 75).
 */
export async function openScope(
  scope: 'host' | 'global',
  s: ScopeSettings,
  state: HostState,
): Promise<Scope> {
  if (scope === 'host') {
    const { FlockBackend } = await import('../locks/flock.js');
    return { backend: new FlockBackend(s.lockDir), records: state };
  }
  if (!s.redisUrl) {
    throw new LockConfigError(
      'global scope needs a Redis lock backend: pass --lock-backend redis://host:6379 or set CRONIX_REDIS_URL',
    );
  }
  const { RedisBackend } = await import('../locks/redis.js');
  const redis = await RedisBackend.connect(s.redisUrl, { prefix: s.redisPrefix });
  return {
    backend: redis,
    records: {
      hasSucceeded: (runKey) => redis.hasSucceeded(runKey),
      markSucceeded: (runKey, atMs) => redis.markSucceeded(runKey, atMs, s.target),
      lastSuccess: () => redis.lastSuccess(s.target),
    },
  };
}
