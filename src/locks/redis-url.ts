/**
 * Redis lock-backend URLs (`--lock-backend redis://…`, `$CRONIX_REDIS_URL`):
 * `redis[s]://[[user]:password@]host[:port][/db]`. Every message that shows a
 * URL shows it through {@link redactRedisUrl}, so a password never reaches a
 * log line.
 */
import { echo } from '../contract/echo.js';
import { LockConfigError } from './types.js';

/** Where and how to connect, parsed from a Redis URL. */
export interface RedisTarget {
  /** True for `rediss://` (TLS). */
  tls: boolean;
  /** Host name or IP address (IPv6 without brackets). */
  host: string;
  /** TCP port, default 6379. */
  port: number;
  /** Logical database number (`/db`), default 0. */
  db: number;
  /** ACL user name, when given. */
  username: string | undefined;
  /** Password, when given. Never log it. */
  password: string | undefined;
}

/** Default Redis port. */
export const DEFAULT_REDIS_PORT = 6379;

/**
 * Returns `url` with any credentials replaced by `***` (`redis://user:***@h`),
 * also for strings that do not parse as URLs. A user-info part without a colon
 * is masked whole, since some tools put a bare password there.
 */
export function redactRedisUrl(url: string): string {
  const schemeEnd = url.indexOf('://');
  const start = schemeEnd >= 0 ? schemeEnd + 3 : 0;
  const rest = url.slice(start);
  // The last '@' anywhere: a Redis URL has no '@' after its authority, and an
  // unencoded password may hold '/' or '@'. Over-masking beats leaking.
  const at = rest.lastIndexOf('@');
  if (at < 0) return url;
  const userinfo = rest.slice(0, at);
  const colon = userinfo.indexOf(':');
  const masked = colon >= 0 ? `${userinfo.slice(0, colon)}:***` : '***';
  return `${url.slice(0, start)}${masked}${rest.slice(at)}`;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function fail(url: string, problem: string): never {
  throw new LockConfigError(
    `redis URL ${echo(redactRedisUrl(url))} ${problem}; expected redis[s]://[[user]:password@]host[:port][/db]`,
  );
}

/**
 * Parses a Redis lock-backend URL.
 * @throws {LockConfigError} naming the (redacted) value and what is wrong: a
 *   scheme other than `redis`/`rediss`, no host, a bad port or database
 *   number, or a query string.
 */
export function parseRedisUrl(url: string): RedisTarget {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) fail(url, 'is not a URL');
  if (scheme !== 'redis' && scheme !== 'rediss') {
    fail(url, `has scheme "${scheme}:", not "redis:" or "rediss:"`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    fail(url, 'is not a valid URL (check the host and that the port is a number)');
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === '') fail(url, 'has no host');
  let port = DEFAULT_REDIS_PORT;
  if (parsed.port !== '') {
    port = Number(parsed.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) fail(url, 'has an invalid port');
  }
  let db = 0;
  if (parsed.pathname !== '' && parsed.pathname !== '/') {
    const match = /^\/(\d{1,9})$/.exec(parsed.pathname);
    if (match?.[1] === undefined) fail(url, 'has a database path that is not a number (e.g. /0)');
    db = Number(match[1]);
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    fail(url, 'has a query or fragment, which cronix does not support');
  }
  return {
    tls: scheme === 'rediss',
    host,
    port,
    db,
    username: parsed.username === '' ? undefined : decode(parsed.username),
    password: parsed.password === '' ? undefined : decode(parsed.password),
  };
}
