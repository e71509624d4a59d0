/**
 * The API routes the web UI adds (SPEC §13): the login session
 * (`/api/v1/session`) and the live event stream (`/api/v1/events`). The session route
 * checks its own requests (its state is open; logging in and out need a same-origin request,
 * and wrong tokens count against the client like wrong bearer tokens); the event stream is
 * behind the API's credentials (`access.ts`), and ends when they stop holding (`stream-guard.ts`).
 */
import type { IncomingMessage } from 'node:http';
import type { Context, Hono } from 'hono';
import { echo, echoValue, MAX_ECHO } from '../contract/echo.js';
import { remoteAddress, type Access } from './access.js';
import type { EventHub } from './events.js';
import type { StreamGuard } from './stream-guard.js';
import { errorJson } from './serialize.js';
import {
  crossOrigin,
  isSecure,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
  type Sessions,
} from './session.js';
import type { Principal } from './tokens.js';

/**
 * The session state as the UI reads it: who is signed in, with which role and for which apps
 * (SPEC §18; `apps` empty: every app), so the UI shows only the actions the session may use.
 */
async function sessionJson(
  access: Access,
  c: Context,
  fresh?: { csrf: string; expiresAt: number; principal: Principal },
) {
  const { sessions } = access;
  const sso = access.sso !== null;
  if (sessions === null)
    return {
      auth: 'none',
      authenticated: true,
      csrf_token: null,
      expires_at: null,
      who: null,
      role: 'admin',
      apps: [],
      sso: false,
    };
  const s = fresh ?? sessions.verify(readCookie(c.req.header('cookie'), SESSION_COOKIE));
  const principal =
    fresh?.principal ?? (s && 'subject' in s ? await access.sessionPrincipal(s.subject) : null);
  const live = s !== null && principal !== null;
  return {
    auth: 'token',
    authenticated: live,
    csrf_token: live ? s.csrf : null,
    expires_at: live ? new Date(s.expiresAt).toISOString() : null,
    who: principal?.who ?? null,
    role: principal?.role ?? null,
    apps: live ? principal.apps : [],
    sso,
  };
}

/** 403 for a login or logout from another origin, else null. */
function foreign(c: Context, sessions: Sessions | null): Response | null {
  const cross = crossOrigin(c, sessions === null);
  return cross === null ? null : c.json(errorJson('forbidden', cross), 403);
}

/** Mounts `/api/v1/session` (GET state, POST login, DELETE logout) and `/api/v1/events`. */
export function mountUiApi(
  app: Hono,
  access: Access,
  hub: EventHub,
  guard: StreamGuard,
  audit?: (c: Context, row: { who: Principal; action: string; status: number }) => Promise<void>,
): void {
  const { sessions } = access;
  app.get('/api/v1/session', async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(await sessionJson(access, c));
  });

  app.post('/api/v1/session', async (c) => {
    c.header('cache-control', 'no-store');
    const refused = foreign(c, sessions);
    if (refused) return refused;
    if (sessions === null)
      return c.json(
        errorJson('conflict', 'this daemon runs with --no-auth: there is nothing to log in to'),
        409,
      );
    const locked = access.lockedOut(c);
    if (locked) return access.refuse(c, locked);
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json(errorJson('invalid_request', 'request body is not valid JSON'), 400);
    }
    const token = (body as { token?: unknown } | null)?.token;
    if (typeof token !== 'string' || token === '')
      return c.json(
        errorJson(
          'invalid_request',
          `expected {"token": "<API token>"}, found ${echoValue(body)}`,
          'token',
        ),
        400,
      );
    const checked = await access.tokens?.check(token.trim());
    if (!checked?.ok) {
      const why = checked?.why ?? 'unknown';
      access.failed(c, `failed login (${why === 'unknown' ? 'wrong' : why} token)`);
      return c.json(errorJson('unauthorized', 'wrong, revoked or expired token'), 401);
    }
    access.succeeded(c);
    const fresh = sessions.create({
      kind: 'token',
      name: checked.principal.who,
      binding: checked.binding,
    });
    await audit?.(c, { who: checked.principal, action: 'login', status: 200 });
    c.header('set-cookie', sessionCookie(fresh.cookie, isSecure(c)));
    return c.json(await sessionJson(access, c, { ...fresh, principal: checked.principal }));
  });

  app.delete('/api/v1/session', async (c) => {
    c.header('cache-control', 'no-store');
    const refused = foreign(c, sessions);
    if (refused) return refused;
    if (sessions !== null) {
      let nonce: string | null = null;
      const cookie = readCookie(c.req.header('cookie'), SESSION_COOKIE);
      const leaving = sessions.verify(cookie);
      const who = leaving ? await access.sessionPrincipal(leaving.subject) : null;
      try {
        nonce = sessions.revoke(cookie);
      } catch (err) {
        access.warn(
          `logout: the revocation could not be saved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); it holds until the daemon restarts`,
        );
      }
      if (nonce !== null) hub.endSession(nonce); // its open event streams end with it
      if (who !== null) await audit?.(c, { who, action: 'logout', status: 200 });
      c.header('set-cookie', sessionCookie(null, isSecure(c)));
    }
    return c.json({
      auth: sessions ? 'token' : 'none',
      authenticated: sessions === null,
      csrf_token: null,
      expires_at: null,
      who: null,
      role: sessions ? null : 'admin',
      apps: [],
      sso: access.sso !== null,
    });
  });

  app.get('/api/v1/events', (c) => {
    const q = c.req.query();
    for (const k of Object.keys(q)) {
      if (k !== 'app' && k !== 'job')
        return c.json(
          errorJson('invalid_request', `unknown query parameter ${echo(k)}`, k.slice(0, MAX_ECHO)),
          400,
        );
    }
    const filter = {
      ...(q['app'] ? { app: q['app'] } : {}),
      ...(q['job'] ? { job: q['job'] } : {}),
    };
    const session = sessions?.verify(readCookie(c.req.header('cookie'), SESSION_COOKIE));
    // a client that closes its half of the connection has left (EventSource never half-closes)
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
    const holds = access.credentialCheck(c);
    return hub.stream(c.req.header('last-event-id'), filter, {
      client: remoteAddress(c),
      ...(session ? { session: session.nonce } : {}),
      watch: (end) => guard.watch(holds, end),
      ...(socket
        ? {
            onLeave: (leave: () => void) => {
              socket.once('end', leave);
              return () => socket.off('end', leave);
            },
          }
        : {}),
    });
  });
}
