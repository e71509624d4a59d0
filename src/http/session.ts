/**
 * The web UI's login (SPEC §13): the API token, given once, is exchanged for
 * an `HttpOnly; SameSite=Strict` session cookie; mutations made with that
 * cookie also need the session's CSRF token in `X-CSRF-Token`. With
 * `--no-auth` there is no login and no cookie.
 *
 * Sessions are stateless: the cookie is `v1.<expiry>.<nonce>.<mac>`, the mac
 * an HMAC-SHA256 under a key derived from the API token, so a session survives
 * a daemon restart, is valid on every replica that shares the token, and a
 * new token ends every session. Logging out revokes the nonce in memory until
 * it expires.
 *
 * Every mutation, whatever its credentials, is refused (403) when the browser
 * says it comes from another origin (`Origin` not this host, or
 * `Sec-Fetch-Site: cross-site`), and under `--no-auth` when the `Host` is not
 * a loopback name (DNS rebinding). Clients that are not browsers send neither
 * header and are unaffected.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'cronix_session';
/** Header carrying the CSRF token on cookie-authenticated mutations. */
export const CSRF_HEADER = 'x-csrf-token';
/** How long a session lasts. */
export const SESSION_SECONDS = 12 * 3600;

/** Why a mutation is refused, or `ok`. */
export type Verdict =
  | { ok: true }
  | { ok: false; status: 401 | 403; code: 'unauthorized' | 'forbidden'; message: string };

const b64 = (buf: Buffer): string => buf.toString('base64url');

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Reads one cookie from a `Cookie` header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Signs and checks session cookies and CSRF tokens under one API token. */
export class Sessions {
  private readonly key: Buffer;
  /** Logged-out nonces → their expiry (ms). */
  private readonly revoked = new Map<string, number>();

  constructor(
    private readonly token: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = createHmac('sha256', token).update('cronix web session v1').digest();
  }

  /** Whether the token is right (login) — compared in constant time. */
  tokenMatches(given: string): boolean {
    return safeEqual(given, this.token);
  }

  /** Whether `Authorization` carries the token. */
  bearer(header: string | undefined): boolean {
    const m = /^Bearer (.+)$/.exec(header ?? '');
    return m !== null && this.tokenMatches(m[1] as string);
  }

  private mac(text: string): string {
    return b64(createHmac('sha256', this.key).update(text).digest());
  }

  /** A new session: the cookie value and its CSRF token. */
  create(): { cookie: string; csrf: string; expiresAt: number } {
    const expiresAt = this.now() + SESSION_SECONDS * 1000;
    const nonce = b64(randomBytes(18));
    const body = `v1.${Math.floor(expiresAt / 1000)}.${nonce}`;
    return { cookie: `${body}.${this.mac(body)}`, csrf: this.csrfFor(nonce), expiresAt };
  }

  private csrfFor(nonce: string): string {
    return this.mac(`csrf.${nonce}`);
  }

  /** The session's nonce and expiry when the cookie is genuine, current and not revoked. */
  verify(cookie: string | undefined): { nonce: string; expiresAt: number; csrf: string } | null {
    const m = /^(v1\.(\d{1,12})\.([A-Za-z0-9_-]{24}))\.([A-Za-z0-9_-]{43})$/.exec(cookie ?? '');
    if (!m) return null;
    const [, body, exp, nonce, mac] = m as unknown as [string, string, string, string, string];
    if (!safeEqual(mac, this.mac(body))) return null;
    const expiresAt = Number(exp) * 1000;
    if (expiresAt <= this.now() || this.revoked.has(nonce)) return null;
    return { nonce, expiresAt, csrf: this.csrfFor(nonce) };
  }

  /** Ends a session before its expiry. */
  revoke(cookie: string | undefined): void {
    const s = this.verify(cookie);
    if (!s) return;
    const now = this.now();
    for (const [n, exp] of this.revoked) if (exp <= now) this.revoked.delete(n);
    this.revoked.set(s.nonce, s.expiresAt);
  }
}

/** `Set-Cookie` for a session (or, with `value` null, one that deletes it). */
export function sessionCookie(value: string | null, secure: boolean): string {
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
  return value === null
    ? `${SESSION_COOKIE}=; Max-Age=0; ${attrs.join('; ')}`
    : `${SESSION_COOKIE}=${value}; Max-Age=${SESSION_SECONDS}; ${attrs.join('; ')}`;
}

/** Whether the request reached us over TLS (directly or through a proxy that says so). */
export function isSecure(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/i;

/** Refuses browser requests from another origin (CSRF), whatever the credentials. */
function crossOrigin(c: Context, noAuth: boolean): string | null {
  const origin = c.req.header('origin');
  const host = c.req.header('host') ?? '';
  if (origin !== undefined && origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return 'the Origin header is not a URL';
    }
    if (originHost.toLowerCase() !== host.toLowerCase())
      return 'a request from another origin cannot change anything here';
  } else if (origin === 'null') {
    return 'a request from an opaque origin cannot change anything here';
  }
  if (c.req.header('sec-fetch-site') === 'cross-site')
    return 'a cross-site request cannot change anything here';
  if (noAuth && !LOOPBACK_HOST.test(host))
    return `with --no-auth, mutations are accepted only for a loopback Host, not ${JSON.stringify(host.slice(0, 100))}`;
  return null;
}

/**
 * Decides a mutation: cross-origin browser requests are refused; then a
 * bearer token, or a session cookie with its CSRF token, is needed (none
 * with `--no-auth`, nor for the login itself: `credentialFree`).
 */
export function authorizeMutation(
  c: Context,
  sessions: Sessions | null,
  credentialFree = false,
): Verdict {
  const cross = crossOrigin(c, sessions === null);
  if (cross !== null) return { ok: false, status: 403, code: 'forbidden', message: cross };
  if (sessions === null || credentialFree) return { ok: true };
  if (sessions.bearer(c.req.header('authorization'))) return { ok: true };
  const session = sessions.verify(readCookie(c.req.header('cookie'), SESSION_COOKIE));
  if (session) {
    const given = c.req.header(CSRF_HEADER);
    if (given !== undefined && safeEqual(given, session.csrf)) return { ok: true };
    return {
      ok: false,
      status: 403,
      code: 'forbidden',
      message: `a session needs its CSRF token in the ${CSRF_HEADER} header`,
    };
  }
  return {
    ok: false,
    status: 401,
    code: 'unauthorized',
    message:
      'mutations need "Authorization: Bearer <token>" (the token file is in the data dir) or a web UI session',
  };
}
