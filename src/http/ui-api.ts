/**
 * The API routes the web UI adds (SPEC §13): the login session
 * (`/api/v1/session`) and the live event stream (`/api/v1/events`).
 */
import type { Context, Hono } from 'hono';
import { echo, echoValue, MAX_ECHO } from '../contract/echo.js';
import type { EventHub } from './events.js';
import { errorJson } from './serialize.js';
import { isSecure, readCookie, SESSION_COOKIE, sessionCookie, type Sessions } from './session.js';

/** The session state as the UI reads it. */
function sessionJson(
  sessions: Sessions | null,
  c: Context,
  fresh?: { csrf: string; expiresAt: number },
) {
  if (sessions === null)
    return { auth: 'none', authenticated: true, csrf_token: null, expires_at: null };
  const s = fresh ?? sessions.verify(readCookie(c.req.header('cookie'), SESSION_COOKIE));
  return {
    auth: 'token',
    authenticated: s !== null,
    csrf_token: s?.csrf ?? null,
    expires_at: s ? new Date(s.expiresAt).toISOString() : null,
  };
}

/** Mounts `/api/v1/session` (GET state, POST login, DELETE logout) and `/api/v1/events`. */
export function mountUiApi(app: Hono, sessions: Sessions | null, hub: EventHub): void {
  app.get('/api/v1/session', (c) => {
    c.header('cache-control', 'no-store');
    return c.json(sessionJson(sessions, c));
  });

  app.post('/api/v1/session', async (c) => {
    c.header('cache-control', 'no-store');
    if (sessions === null)
      return c.json(
        errorJson('conflict', 'this daemon runs with --no-auth: there is nothing to log in to'),
        409,
      );
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
    if (!sessions.tokenMatches(token.trim()))
      return c.json(errorJson('unauthorized', 'wrong token'), 401);
    const fresh = sessions.create();
    c.header('set-cookie', sessionCookie(fresh.cookie, isSecure(c)));
    return c.json(sessionJson(sessions, c, fresh));
  });

  app.delete('/api/v1/session', (c) => {
    c.header('cache-control', 'no-store');
    if (sessions !== null) {
      sessions.revoke(readCookie(c.req.header('cookie'), SESSION_COOKIE));
      c.header('set-cookie', sessionCookie(null, isSecure(c)));
    }
    return c.json({
      auth: sessions ? 'token' : 'none',
      authenticated: sessions === null,
      csrf_token: null,
      expires_at: null,
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
    return hub.stream(c.req.header('last-event-id'), filter);
  });
}
