/**
 * What the signed-in session may do (SPEC §18), so that a page shows an action only to a session
 * the API would let use it, instead of a button that answers 403.
 *
 * The decision is the server's own, not a copy: the route table (`route-roles.ts`: the role each
 * route needs and where it finds the apps it acts on) and the role ranking (`roleAtLeast`) are
 * bundled into the UI as they are. The session's role and apps come from `GET /api/v1/session`
 * (`apps` empty: every app; under `--no-auth` the session is an admin). A route whose app is
 * optional in its body (`apps: 'body'`: a bulk replay, a freeze) acts on every app without one,
 * so a session limited to apps may use it only naming one of them.
 *
 * Hiding is a courtesy, not the guard: the API checks every request whatever the UI shows.
 */
import { roleAtLeast, type Role } from '../../../daemon/store/access-types.js';
import { appScoped, ROUTE_ROLES, UNLISTED } from '../../route-roles.js';

/** A route as the table names it: `METHOD /api/v1/path/{param}`. */
export type RouteKey = `${'GET' | 'POST' | 'DELETE'} /api/v1/${string}`;

let role: Role | null = null;
let apps: readonly string[] = [];

/** Remembers the session's role and apps (at start, after a login or a logout). */
export function rememberAccess(s: { role?: Role | null; apps?: string[] }): void {
  role = s.role ?? null;
  apps = s.apps ?? [];
}

/**
 * Whether the session may call `route` for `app` — without one: for some app, or, for a route
 * whose body's app is optional, for every app.
 */
export function may(route: RouteKey, app?: string | null): boolean {
  const rule = ROUTE_ROLES[route] ?? UNLISTED;
  if (rule.role === 'public') return true;
  if (role === null || !roleAtLeast(role, rule.role)) return false;
  if (apps.length === 0 || !appScoped(rule)) return true;
  if (rule.apps === undefined) return false;
  if (app == null) return rule.apps !== 'body';
  return apps.includes(app);
}

/** Whether the session may use the verbs on `app`'s jobs and runs (trigger, pause, cancel…). */
export function mayChange(app: string): boolean {
  return may('POST /api/v1/jobs/{app}/{job}/trigger', app);
}

/**
 * Why the actions on `app` (or, without one, the page's) are not shown, in a few words; null
 * when the session may use them.
 */
export function readOnlyReason(app?: string): string | null {
  if (app === undefined ? may('POST /api/v1/jobs/{app}/{job}/trigger') : mayChange(app))
    return null;
  if (role === null) return 'Read-only: not signed in';
  if (!roleAtLeast(role, 'operator')) return `Read-only: signed in as ${role}`;
  return `Read-only here: this session acts on ${apps.length > 1 ? 'apps' : 'app'} ${apps.join(', ')} only`;
}
