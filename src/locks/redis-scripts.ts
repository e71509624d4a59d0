/**
 * The Lua scripts of the Redis lock backend. Each runs atomically on the
 * server, so "check the token, then act" can never interleave with another
 * client. Each runs by its SHA1 (EVALSHA), falling back to EVAL when the server's
 * script cache is empty (`resp.ts`).
 */
import { Script } from './resp.js';

/**
 * Take the lock if free. KEYS: lock, fence, holder. ARGV: token, ttl ms,
 * holder JSON. Returns `{1, fencingToken}` or `{0, holderJson|''}`.
 *
 * The fencing token is `max(previous + 1, server clock in microseconds)`:
 * strictly increasing while the fence key lives and, because it tracks the
 * clock, still greater than every earlier token after the key was lost (a
 * restart without persistence, FLUSHALL, a failover to a replica that missed
 * writes), where a plain INCR would start again at 1. It cannot run ahead of
 * the clock, since one Redis cannot take a lock more than once per
 * microsecond; so a token after a loss beats every earlier one as long as the
 * server clock did not step back across the loss (see docs/locks.md). TIME is
 * the Redis server's clock, the one that also expires the locks. Tokens stay
 * below 2^53 (exact in JavaScript and Lua) until the year 2255.
 * `replicate_commands` (first, before any write) lets Redis < 5 write after
 * reading TIME; since Redis 5 it is a no-op.
 */
export const ACQUIRE_LUA = `
if redis.replicate_commands then redis.replicate_commands() end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local time = redis.call('TIME')
  local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local fence = (tonumber(redis.call('GET', KEYS[2]) or '') or 0) + 1
  if fence < now_us then fence = now_us end
  redis.call('SET', KEYS[2], string.format('%d', fence))
  redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[2])
  return {1, fence}
end
return {0, redis.call('GET', KEYS[3]) or ''}
`;

/** Extend lock and holder TTL while the token is ours. KEYS: lock, holder. ARGV: token, ttl ms. */
export const REFRESH_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return 1
end
return 0
`;

/** Delete lock and holder while the token is ours. KEYS: lock, holder. ARGV: token. */
export const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
return 0
`;

/**
 * Record a succeeded run. KEYS: done, last-success. ARGV: success time (unix
 * s), done TTL (s). `last-success` only moves forward (a late, older success
 * never hides a newer one) and does not expire.
 */
export const MARK_SUCCEEDED_LUA = `
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local prev = tonumber(redis.call('GET', KEYS[2]) or '')
if prev == nil or tonumber(ARGV[1]) > prev then
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1
`;

/** The scripts, each with its number of keys. */
export const LOCK_SCRIPTS = {
  acquire: new Script(ACQUIRE_LUA, 3),
  refresh: new Script(REFRESH_LUA, 2),
  release: new Script(RELEASE_LUA, 2),
  markSucceeded: new Script(MARK_SUCCEEDED_LUA, 2),
} as const;
