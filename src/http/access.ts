/**
 * Who may call what (SPEC §7, §9 item 9, §13, §18):
 *
 * - Every request must name this daemon in `Host` ({@link AllowedHosts}); any other name is
 *   answered 421 `misdirected_request` (DNS rebinding), whatever the route or credentials.
 * - Every `/api/v1` route needs a bearer token (a named token, or the token file's, SPEC §18:
 *   `tokens.ts`) or a web UI session, reads included (run output, job URLs and headers, the
 *   event stream, notifications, runs and jobs); what each role may call is one table
 *   (`route-roles.ts`, enforced by `authorize.ts`), whose `public` routes (the session and SSO
 *   routes, host reports) check their own. Mutations with a session also need its CSRF token,
 *   and cross-origin browser mutations are refused. `--no-auth` (loopback only) opens
 *   everything.
 * - `/healthz` and `/openapi.json` are open (a status and a job count; a static document);
 *   `/metrics` is open unless `serve --metrics-auth` (it names jobs and notifiers, nothing more).
 * - Guessing is slowed: wrong bearer tokens and wrong logins count against the client
 *   ({@link FailureThrottle}) and are logged without the value tried.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { cut, echo } from '../contract/echo.js';
import type { AllowedHosts } from './hosts.js';
import { errorJson } from './serialize.js';
import {
  crossOrigin,
  CSRF_HEADER,
  readCookie,
  safeEqual,
  SESSION_COOKIE,
  type SessionSubject,
  type Sessions,
} from './session.js';
import { clientKey, FailureThrottle } from './throttle.js';
import { ANONYMOUS, type Principal, type TokenAuth } from './tokens.js';

/** Why a request is refused, or `ok` with whom it acts for and how it said so. */
export type Verdict =
  | { ok: true; session?: string; principal: Principal; via: 'bearer' | 'session' | 'none' }
  | {
      ok: false;
      status: 401 | 403 | 429;
      code: 'unauthorized' | 'forbidden' | 'too_many_requests';
      message: string;
      retryAfter?: number;
    };

/** What a route needs. */
export type Need = 'read' | 'mutation';

/** The remote address of a request served by `@hono/node-server` (absent in unit tests). */
export function remoteAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: IncomingMessage } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/** Access decisions of one daemon. */
export class Access {
  readonly throttle: FailureThrottle;
  /** Single sign-on, when `serve --oidc-issuer` configures it (`sso.ts`); null otherwise. */
  sso: { issuer: string } | null = null;

  /**
   * @param sessions null under `--no-auth`
   * @param log told each refused credential and each lock-out (never the value tried)
   */
  constructor(
    readonly sessions: Sessions | null,
    /** Who a token is (named tokens, the token file's); null under `--no-auth`. */
    readonly tokens: TokenAuth | null,
    readonly hosts: AllowedHosts,
    /** Logs a warning (refused credentials, a logout that could not be saved). */
    readonly warn: (message: string) => void,
    readonly metricsAuth = false,
    now: () => number = Date.now,
  ) {
    this.throttle = new FailureThrottle(now);
  }

  /** The 421 answer for a request naming another host, or null when the host is ours. */
  misdirected(c: Context): Response | null {
    // without a Host header (HTTP/1.0) the server names the request by its listen address
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    if (this.hosts.allows(host)) return null;
    return c.json(
      errorJson(
        'misdirected_request',
        host === ''
          ? 'a request must name this daemon in its Host header'
          : `Host ${echo(host)} is not a name of this daemon; if it is, start serve with --allowed-host ${echo(host.replace(/:\d+$/, ''))} or --public-url`,
      ),
      421,
    );
  }

  /** A refusal as a response (429s with `Retry-After`). */
  refuse(c: Context, v: Exclude<Verdict, { ok: true }>): Response {
    if (v.retryAfter !== undefined) c.header('retry-after', String(v.retryAfter));
    return c.json(errorJson(v.code, v.message), v.status);
  }

  /** 429 while the client is locked out, else null. */
  lockedOut(c: Context): Exclude<Verdict, { ok: true }> | null {
    const wait = this.throttle.retryAfter(clientKey(remoteAddress(c)));
    if (wait === 0) return null;
    return {
      ok: false,
      status: 429,
      code: 'too_many_requests',
      message: `too many wrong tokens from this address; try again in ${wait} s`,
      retryAfter: wait,
    };
  }

  /** Counts a wrong token of this request's client and logs it (without the value). */
  failed(c: Context, what: string): void {
    const client = clientKey(remoteAddress(c));
    const f = this.throttle.fail(client);
    this.warn(
      `auth: ${what} from ${client} on ${c.req.method} ${cut(c.req.path)} (failure ${f.failures} in a row; the value tried is not logged)` +
        (f.lockedSeconds > 0 ? `; this address is refused for ${f.lockedSeconds} s` : ''),
    );
  }

  /** Clears the client's failures after a right token. */
  succeeded(c: Context): void {
    this.throttle.succeed(clientKey(remoteAddress(c)));
  }

  /**
   * Decides who calls an authenticated route: cross-origin browser mutations are refused; then a
   * bearer token (named, or the token file's) or a session cookie (with its CSRF token for a
   * mutation) is needed. What the caller's role allows is decided by the caller (`authorize.ts`).
   */
  async check(c: Context, need: Need): Promise<Verdict> {
    const sessions = this.sessions;
    if (need === 'mutation') {
      const cross = crossOrigin(c, sessions === null);
      if (cross !== null) return { ok: false, status: 403, code: 'forbidden', message: cross };
    }
    if (sessions === null || this.tokens === null)
      return { ok: true, principal: ANONYMOUS, via: 'none' };
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const locked = this.lockedOut(c);
      if (locked) return locked;
      const m = /^Bearer (.+)$/.exec(authorization);
      const checked = m ? await this.tokens.check((m[1] as string).trim()) : null;
      if (checked?.ok) {
        this.succeeded(c);
        return { ok: true, principal: checked.principal, via: 'bearer' };
      }
      this.failed(
        c,
        checked === null
          ? 'malformed Authorization header'
          : checked.why === 'unknown'
            ? 'wrong bearer token'
            : `${checked.why} bearer token`,
      );
      return {
        ok: false,
        status: 401,
        code: 'unauthorized',
        message:
          'wrong, revoked or expired token in the Authorization header (expected "Bearer <token>")',
      };
    }
    const session = sessions.verify(readCookie(c.req.header('cookie'), SESSION_COOKIE));
    if (session) {
      const principal = await this.sessionPrincipal(session.subject);
      if (principal === null)
        return {
          ok: false,
          status: 401,
          code: 'unauthorized',
          message: 'the token this session was opened with has been revoked or has expired',
        };
      const ok: Verdict = { ok: true, session: session.nonce, principal, via: 'session' };
      if (need === 'read') return ok;
      const given = c.req.header(CSRF_HEADER);
      if (given !== undefined && safeEqual(given, session.csrf)) return ok;
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
        'this needs "Authorization: Bearer <token>" (the token file is in the data dir) or a web UI session',
    };
  }

  /**
   * Whether the credential of an authorized request still holds, to be asked again later by the
   * responses that stay open (`stream-guard.ts`): its bearer token is not revoked nor expired, or
   * its session is not logged out nor expired and the token it was opened with still holds. The
   * same credential {@link check} read (the `Authorization` header before the cookie); nothing is
   * counted against the client. Under `--no-auth`, always.
   */
  credentialCheck(c: Context): () => Promise<boolean> {
    const { sessions, tokens } = this;
    if (sessions === null || tokens === null) return () => Promise.resolve(true);
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const value = /^Bearer (.+)$/.exec(authorization)?.[1]?.trim();
      return async () => value !== undefined && (await tokens.check(value)).ok;
    }
    const cookie = readCookie(c.req.header('cookie'), SESSION_COOKIE);
    return async () => {
      const session = sessions.verify(cookie);
      return session !== null && (await this.sessionPrincipal(session.subject)) !== null;
    };
  }

  /** The principal of a session: its token's, while that token holds; an SSO user's as logged in. */
  async sessionPrincipal(subject: SessionSubject): Promise<Principal | null> {
    if (subject.kind === 'user')
      return { who: subject.user, whoKind: 'user', role: subject.role, apps: [] };
    const named = await this.tokens?.named(subject.name, subject.binding);
    return named?.ok ? named.principal : null;
  }
}
