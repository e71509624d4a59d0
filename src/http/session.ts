/**
 * The web UI's login (SPEC §13): the API token, given once, is exchanged for
 * an `HttpOnly; SameSite=Strict` session cookie; mutations made with that
 * cookie also need the session's CSRF token in `X-CSRF-Token`. With
 * `--no-auth` there is no login and no cookie.
 *
 * Sessions are stateless: the cookie is `v1.<expiry>.<nonce>.<mac>`, the mac
 * an HMAC-SHA256 under a key derived from the API token, so a session survives
 * a daemon restart, is valid on every replica that shares the token, and a
 * new token ends every session. Logging out revokes the nonce until the session
 * would have expired; the revocations are kept in the data dir
 * (`session-revocations.ts`), so a logged-out cookie stays dead across restarts.
 *
 * Every mutation, whatever its credentials, is refused (403) when the browser
 * says it comes from another origin (`Origin` not this host, or
 * `Sec-Fetch-Site: cross-site`), and under `--no-auth` when the `Host` is not
 * a loopback name (DNS rebinding). Clients that are not browsers send neither
 * header and are unaffected. Who may do what is decided in `access.ts`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import type { RevocationStore } from './session-revocations.js';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'cronix_session';
/** Header carrying the CSRF token on cookie-authenticated mutations. */
export const CSRF_HEADER = 'x-csrf-token';
/** How long a session lasts. */
export const SESSION_SECONDS = 12 * 3600;

const b64 = (buf: Buffer): string => buf.toString('base64url');

/** Compares two strings in constant time (for equal lengths). */
export function safeEqual(a: string, b: string): boolean {
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

/**
 * Whom a session acts for: a named token given at login — that very token, by its `binding`
 * (`tokens.ts`: a new token of the same name is another token), its role and revocation read
 * from the store on every request — or a user signed in through SSO (the role mapped at login).
 * `binding` is null in sessions made before sessions were bound (they hold for the file token
 * only).
 */
export type SessionSubject =
  | { kind: 'token'; name: string; binding: string | null }
  | { kind: 'user'; user: string; role: 'viewer' | 'operator' | 'admin' };

/** The subject of a `v1` cookie: the token file's token (`default`). */
const DEFAULT_SUBJECT: SessionSubject = { kind: 'token', name: 'default', binding: null };

function parseSubject(text: string): SessionSubject | null {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    if (typeof v['t'] === 'string')
      return { kind: 'token', name: v['t'], binding: typeof v['b'] === 'string' ? v['b'] : null };
    const r = v['r'];
    if (typeof v['u'] === 'string' && (r === 'viewer' || r === 'operator' || r === 'admin'))
      return { kind: 'user', user: v['u'], role: r };
  } catch {
    // signed by us, so never; but a cookie is input
  }
  return null;
}

/** Signs and checks session cookies and CSRF tokens under one API token. */
export class Sessions {
  private readonly key: Buffer;
  /** Logged-out nonces → their expiry (ms). */
  private readonly revoked: Map<string, number>;

  /**
   * @param store where revocations are kept across restarts; absent: in memory only
   */
  constructor(
    private readonly token: string,
    private readonly now: () => number = Date.now,
    private readonly store?: RevocationStore,
  ) {
    this.key = createHmac('sha256', token).update('cronix web session v1').digest();
    this.revoked = store?.load() ?? new Map();
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

  /**
   * A new session for `subject` (default: the token file's token, as before SPEC §18): the
   * cookie value and its CSRF token.
   */
  create(subject: SessionSubject = DEFAULT_SUBJECT): {
    cookie: string;
    csrf: string;
    expiresAt: number;
  } {
    const expiresAt = this.now() + SESSION_SECONDS * 1000;
    const nonce = b64(randomBytes(18));
    const who =
      subject.kind === 'token'
        ? { t: subject.name, ...(subject.binding !== null ? { b: subject.binding } : {}) }
        : { u: subject.user, r: subject.role };
    const body = `v2.${Math.floor(expiresAt / 1000)}.${nonce}.${b64(Buffer.from(JSON.stringify(who)))}`;
    return { cookie: `${body}.${this.mac(body)}`, csrf: this.csrfFor(nonce), expiresAt };
  }

  private csrfFor(nonce: string): string {
    return this.mac(`csrf.${nonce}`);
  }

  /**
   * The session's nonce, expiry and subject when the cookie is genuine, current and not revoked.
   * A cookie of before SPEC §18 (`v1`, no subject) is a session of the token file's token.
   */
  verify(cookie: string | undefined): {
    nonce: string;
    expiresAt: number;
    csrf: string;
    subject: SessionSubject;
  } | null {
    const m =
      /^(v1\.(\d{1,12})\.([A-Za-z0-9_-]{24})|v2\.(\d{1,12})\.([A-Za-z0-9_-]{24})\.([A-Za-z0-9_-]{1,800}))\.([A-Za-z0-9_-]{43})$/.exec(
        cookie ?? '',
      );
    if (!m) return null;
    const body = m[1] as string;
    const exp = (m[2] ?? m[4]) as string;
    const nonce = (m[3] ?? m[5]) as string;
    if (!safeEqual(m[7] as string, this.mac(body))) return null;
    const expiresAt = Number(exp) * 1000;
    if (expiresAt <= this.now() || this.revoked.has(nonce)) return null;
    const subject = m[6] === undefined ? DEFAULT_SUBJECT : parseSubject(m[6]);
    if (subject === null) return null;
    return { nonce, expiresAt, csrf: this.csrfFor(nonce), subject };
  }

  /**
   * Ends a session before its expiry, in memory at once and then in the store.
   * @returns the session's nonce (null when the cookie was no valid session)
   * @throws the store's error when the revocation could not be kept (it holds until a restart)
   */
  revoke(cookie: string | undefined): string | null {
    const s = this.verify(cookie);
    if (!s) return null;
    const now = this.now();
    for (const [n, exp] of this.revoked) if (exp <= now) this.revoked.delete(n);
    this.revoked.set(s.nonce, s.expiresAt);
    this.store?.save(this.revoked);
    return s.nonce;
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

/**
 * Why a browser request from another origin (CSRF) is refused, whatever its credentials, or
 * null when it is not.
 */
export function crossOrigin(c: Context, noAuth: boolean): string | null {
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
