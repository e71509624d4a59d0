/**
 * Rules of `jobs[].request` that JSON Schema cannot express: the URL (WHATWG parse, scheme,
 * host, no credentials) and header names the engine or the HTTP client owns.
 */
import { ENGINE_HEADERS, RESERVED_HEADER_PREFIX, TRANSPORT_HEADERS } from './defaults.js';
import { quote } from './describe.js';

/** Hides a `user:password@` part of a URL-like string before it goes into a message. */
export function redactUserinfo(text: string): string {
  return text.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/*)[^/?#]*@/, '$1***@');
}

/**
 * Checks a job URL. Returns null when it is an absolute `http:`/`https:` URL written
 * `scheme://host…` with a host, no user name or password, and no whitespace or control characters; else a message that never
 * echoes credentials.
 */
export function checkUrl(url: string): string | null {
  // built only for an error message (100,000 valid URLs at start-up need none)
  const shown = (): string => quote(redactUserinfo(url));
  // WHATWG parsing silently strips tabs/newlines and trims spaces; the shim sends the URL as
  // written, so such characters are an error here rather than a surprise later.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f]/.test(url)) {
    return `expected an http:// or https:// URL without spaces or control characters (percent-encode them), found ${shown()}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `expected an absolute http:// or https:// URL, found ${shown()}`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `expected an http:// or https:// URL, found scheme ${quote(parsed.protocol)} in ${shown()}`;
  }
  // the WHATWG parser reads `https:/x`, `http:///x` and `http:\\x` as host `x`: the URL must
  // say `scheme://host` literally, as every other tool that reads the manifest expects
  if (parsed.hostname === '' || !/^https?:\/\/[^/\\?#@]/i.test(url)) {
    return `expected a URL of the form http://host/path or https://host/path (two slashes, then the host), found ${shown()}`;
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return `a URL must not contain a user name or password (found in ${shown()}); keep secrets out of the manifest: requests are signed with auth.secret_refs`;
  }
  return null;
}

/**
 * Checks that a header name is not one cronix or the HTTP client sets itself. Returns null when
 * allowed, else the reason.
 */
export function checkReservedHeader(name: string): string | null {
  const lower = name.toLowerCase();
  if (
    lower.startsWith(RESERVED_HEADER_PREFIX) ||
    (ENGINE_HEADERS as readonly string[]).includes(lower)
  ) {
    return `header ${quote(name)} is set by cronix on every attempt and cannot be overridden (reserved: X-Cron-*, Idempotency-Key, traceparent); remove it`;
  }
  if ((TRANSPORT_HEADERS as readonly string[]).includes(lower)) {
    return `header ${quote(name)} is managed by the HTTP client (message framing or hop-by-hop) and cannot be set in a manifest; remove it`;
  }
  return null;
}
