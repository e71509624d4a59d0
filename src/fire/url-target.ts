/**
 * A request URL split the way an HTTP client sends it, parsed once per URL string: a job's URL
 * is fixed, and a burst of thousands of fires would otherwise parse each one twice per attempt
 * (the signed request target and the transport's connection options).
 */

/** Where a request goes. */
export interface UrlTarget {
  protocol: 'http:' | 'https:';
  /** Host name without IPv6 brackets, as `net.connect` wants it. */
  hostname: string;
  /** Port, '' for the scheme's default. */
  port: string;
  /** The `Host` header: host name (IPv6 in brackets) and a non-default port. */
  host: string;
  /** The request target: path and query. */
  path: string;
  /** `protocol//host` (IPv6 in brackets, a non-default port): what a connection pool is keyed by. */
  origin: string;
  /**
   * `user:password` (decoded) when the URL carries them: manifests forbid it, the transport
   * still sends it as Basic authorization, as `http.request` does for such a URL.
   */
  auth?: string;
}

/** URL strings kept parsed; past this many the cache starts over (a bound, not an LRU). */
const MAX_CACHED = 20_000;
const cache = new Map<string, UrlTarget | null>();

type Origin = Pick<UrlTarget, 'hostname' | 'port' | 'host' | 'origin'> & { protocol: string };
/**
 * The origin parts of the URLs parsed, one copy per origin: 10,000 jobs calling one app held
 * five strings each that were the same (2.3 MB, BENCHMARKS.md). Bounded as {@link cache} is.
 */
const origins = new Map<string, Origin>();

/** The one copy of `u`'s origin parts. */
function originOf(u: URL): Origin {
  const origin = `${u.protocol}//${u.host}`;
  let parts = origins.get(origin);
  if (parts === undefined) {
    if (origins.size >= MAX_CACHED) origins.clear();
    parts = {
      protocol: u.protocol,
      hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
      port: u.port,
      host: u.host,
      origin,
    };
    origins.set(origin, parts);
  }
  return parts;
}

/** The target of `url` (any scheme), or null when it is not a valid absolute URL. */
function parse(url: string): (Omit<UrlTarget, 'protocol'> & { protocol: string }) | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const o = originOf(u);
  const target: Omit<UrlTarget, 'protocol'> & { protocol: string } = {
    protocol: o.protocol,
    hostname: o.hostname,
    port: o.port,
    host: o.host,
    path: `${u.pathname}${u.search}`,
    origin: o.origin,
  };
  if (u.username !== '' || u.password !== '')
    target.auth = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  return target;
}

/**
 * The target of an `http:` / `https:` URL, cached; otherwise why it cannot be sent
 * (`invalid URL`, `unsupported URL scheme ftp:`).
 */
export function urlTarget(url: string): UrlTarget | string {
  const hit = cache.get(url);
  if (hit !== undefined) return hit ?? 'invalid URL';
  const parsed = parse(url);
  if (parsed !== null && parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `unsupported URL scheme ${parsed.protocol}`;
  const target = parsed as UrlTarget | null;
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(url, target);
  return target ?? 'invalid URL';
}

/** The request target (`path?query`) of any absolute URL, exactly as the transport sends it. */
export function requestTarget(url: string): string {
  const target = urlTarget(url);
  if (typeof target !== 'string') return target.path;
  const u = new URL(url); // another scheme: parsed each time (never sent); invalid: throws
  return `${u.pathname}${u.search}`;
}
