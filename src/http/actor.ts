/**
 * Who made a request, as backfills, freezes and dismissals record it (SPEC §16): the caller the
 * access middleware named (`authorize.ts`, SPEC §18) — the token's name (`default` for the token
 * file's) or the SSO user. Under `--no-auth` the request is named by its client, as the audit
 * log's `from`: `cli` when the `cronix` CLI sent it (it says so in {@link CLIENT_HEADER}), `ui`
 * from the web UI, else `api`; a request the middleware did not see (none of the routes that call
 * this) falls back to the same label read from the headers. The name is a label for the people
 * reading the record, not a credential.
 */
import type { Context } from 'hono';
import { callerOf, CLIENT_HEADER } from './authorize.js';
import { readCookie, SESSION_COOKIE } from './session.js';

/** The caller's name, else `cli`, `ui` or `api` (see the module comment). */
export function actorOf(c: Context): string {
  const caller = callerOf(c);
  if (caller)
    return caller.principal.whoKind === 'anonymous' ? caller.source : caller.principal.who;
  if (c.req.header(CLIENT_HEADER)?.trim().toLowerCase() === 'cli') return 'cli';
  if (
    c.req.header('authorization') === undefined &&
    readCookie(c.req.header('cookie'), SESSION_COOKIE)
  )
    return 'ui';
  return 'api';
}
