/**
 * Wire forms shared by both lock backends: which lock keys are valid, and the
 * holder record written beside a lock (the `<key>.holder` sidecar for flock,
 * the `holder:<key>` value for Redis). Both backends use the same JSON so an
 * operator reads one format: `{"pid":123,"host":"web-1","acquired_at":"…Z"}`.
 */
import { echo } from '../contract/echo.js';
import { type Holder, LockConfigError } from './types.js';

/** Longest accepted lock key; leaves room for `.holder.<tmp>` in a 255-byte file name. */
export const MAX_LOCK_KEY_LENGTH = 200;

/**
 * Checks that `key` is usable as a lock key by every backend: non-empty, at most
 * {@link MAX_LOCK_KEY_LENGTH} characters, no `/`, no NUL and no `..` (a key
 * becomes a file name under the lock directory, so it must not escape it).
 * @throws {LockConfigError} naming the key and the rule it breaks.
 */
export function validateLockKey(key: string): void {
  let problem: string | undefined;
  if (key === '') problem = 'is empty';
  else if (key.length > MAX_LOCK_KEY_LENGTH) problem = `is longer than ${MAX_LOCK_KEY_LENGTH}`;
  else if (key.includes('/')) problem = 'contains "/"';
  else if (key.includes('\0')) problem = 'contains a NUL byte';
  else if (key.includes('..')) problem = 'contains ".."';
  if (problem !== undefined) {
    throw new LockConfigError(
      `lock key ${echo(key)} ${problem}; lock keys are "<app>.<job>" names`,
    );
  }
}

/** Serialises a holder as the shared JSON form (`acquired_at` in RFC 3339 UTC). */
export function encodeHolder(holder: Holder): string {
  return JSON.stringify({
    pid: holder.pid,
    host: holder.host,
    acquired_at: new Date(holder.acquiredAt).toISOString(),
  });
}

/**
 * Parses the shared holder JSON. Accepts `acquired_at` as RFC 3339 or epoch
 * ms. Returns null for anything else (missing, truncated or foreign data):
 * a holder record is advisory, never a reason to fail.
 */
export function decodeHolder(text: string | null | undefined): Holder | null {
  if (text === null || text === undefined || text === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const { pid, host } = record;
  const acquired = record['acquired_at'];
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return null;
  if (typeof host !== 'string' || host === '') return null;
  const acquiredAt =
    typeof acquired === 'string'
      ? Date.parse(acquired)
      : typeof acquired === 'number'
        ? acquired
        : NaN;
  if (!Number.isFinite(acquiredAt)) return null;
  return { pid, host, acquiredAt };
}
