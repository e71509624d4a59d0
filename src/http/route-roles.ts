/**
 * Who may call which API route (SPEC §18): **one table**, keyed by `METHOD path` in the OpenAPI
 * document's spelling (`{app}`), read by the access middleware (`authorize.ts`), by the OpenAPI
 * document (`x-cronix-role` on every operation) and by the tests (a route of the API or of the
 * document that has no row here fails `test/daemon/roles.test.ts`; at run time such a route
 * needs `admin`, so a forgotten row closes a route rather than opening it).
 *
 * - `viewer`: every read but run output and the token list;
 * - `operator`: the verbs on jobs and runs (trigger, pause, resume, cancel, replay, backfill,
 *   freeze, dismiss, service start/stop/restart) and run output — within its apps when the
 *   credential names some (`apps`: where the route finds the apps it acts on);
 * - `admin`: everything, the tokens included;
 * - `public`: no credential at all — the session and SSO routes (they check their own) and the
 *   host-mode reports and pings (SPEC §15: authenticated by their signature or ping token).
 *
 * **Apps.** A credential limited to apps (`cronix tokens create --app`) may call a route above
 * `viewer` only when the row says where the route finds the apps it acts on (`apps`, read by
 * `route-apps.ts`) and every one of them is the credential's: a row above `viewer` without
 * `apps` is refused to such a credential, so a new verb that forgets it is closed, not open
 * (and fails `test/daemon/roles.test.ts`). Reads needing `viewer` are not narrowed.
 *
 * A new route gets its row here, in one line. Mutations (every method but GET and HEAD) are
 * written to the audit log under `action` (default: the path's last word).
 */
import type { Role } from '../daemon/store/access-types.js';

/**
 * Where a route finds the apps it acts on (see the module comment):
 * - `path`: its `{app}`;
 * - `run`: the app of its run `{id}`;
 * - `backfill`: the app of its backfill `{id}`;
 * - `body`: the JSON body's `"app"`; none (absent, null or empty) means every app;
 * - `body-runs`: the apps of the runs listed in the JSON body's `"run_ids"`.
 */
export type AppsFrom = 'path' | 'run' | 'backfill' | 'body' | 'body-runs';

/** What a route needs. */
export interface RouteRule {
  role: Role | 'public';
  /** The audit log's verb for a mutation; default the path's last word. */
  action?: string;
  /** Where the apps it acts on are, for a credential limited to apps. */
  apps?: AppsFrom;
}

/** Whether a credential's apps limit the route: every route above `viewer` (module comment). */
export function appScoped(rule: RouteRule): boolean {
  return rule.role === 'operator' || rule.role === 'admin';
}

const viewer: RouteRule = { role: 'viewer' };
const open: RouteRule = { role: 'public' };
const op = (action: string, apps: AppsFrom): RouteRule => ({ role: 'operator', action, apps });

/** The table (see the module comment). */
export const ROUTE_ROLES: Readonly<Record<string, RouteRule>> = {
  // the web UI's session and single sign-on: they check their own requests
  'GET /api/v1/session': open,
  'POST /api/v1/session': { role: 'public', action: 'login' },
  'DELETE /api/v1/session': { role: 'public', action: 'logout' },
  'GET /api/v1/sso/login': open,
  'GET /api/v1/sso/callback': open,
  // reads
  'GET /api/v1/jobs': viewer,
  'GET /api/v1/jobs/{app}/{job}': viewer,
  'GET /api/v1/jobs/{app}/{job}/next': viewer,
  'GET /api/v1/stats': viewer,
  'GET /api/v1/upcoming': viewer,
  'GET /api/v1/runs': viewer,
  'GET /api/v1/runs/{id}': viewer,
  'GET /api/v1/runs/{id}/request': viewer,
  'GET /api/v1/notifications': viewer,
  'GET /api/v1/events': viewer,
  'GET /api/v1/cluster': viewer,
  'GET /api/v1/audit': viewer,
  'GET /api/v1/dead-letters': viewer,
  'GET /api/v1/backfills': viewer,
  'GET /api/v1/backfills/{id}': viewer,
  'GET /api/v1/services': viewer,
  'GET /api/v1/services/{app}/{service}': viewer,
  'GET /api/v1/freezes': viewer,
  // run output may hold what a command printed: operators of the run's app
  'GET /api/v1/runs/{id}/log': { role: 'operator', apps: 'run' },
  // the verbs
  'POST /api/v1/jobs/{app}/{job}/trigger': op('trigger', 'path'),
  'POST /api/v1/jobs/{app}/{job}/pause': op('pause', 'path'),
  'POST /api/v1/jobs/{app}/{job}/resume': op('resume', 'path'),
  'POST /api/v1/jobs/{app}/{job}/skip': op('skip', 'path'),
  'POST /api/v1/runs/{id}/cancel': op('cancel', 'run'),
  'POST /api/v1/runs/{id}/replay': op('replay', 'run'),
  'POST /api/v1/jobs/{app}/{job}/backfills': op('backfill', 'path'),
  'POST /api/v1/backfills/{id}/cancel': op('backfill.cancel', 'backfill'),
  'POST /api/v1/dead-letters/dismiss': op('dismiss', 'body-runs'),
  'POST /api/v1/dead-letters/replay': op('dead-letters.replay', 'body'),
  'POST /api/v1/services/{app}/{service}/start': op('service.start', 'path'),
  'POST /api/v1/services/{app}/{service}/stop': op('service.stop', 'path'),
  'POST /api/v1/services/{app}/{service}/restart': op('service.restart', 'path'),
  'POST /api/v1/freezes': op('freeze', 'body'),
  'POST /api/v1/freezes/unfreeze': op('unfreeze', 'body'),
  // tokens: an admin credential is never limited to apps
  'GET /api/v1/tokens': { role: 'admin' },
  'POST /api/v1/tokens': { role: 'admin', action: 'token.create' },
  'DELETE /api/v1/tokens/{name}': { role: 'admin', action: 'token.revoke' },
  // host-mode reports and pings (SPEC §15): their own signature or ping token
  'POST /api/v1/reports': open,
  'POST /api/v1/ping/{app}/{job}': open,
  'POST /api/v1/ping/{app}/{job}/{suffix}': open,
  'POST /api/v1/ping/{app}/{job}/start': open,
  'POST /api/v1/ping/{app}/{job}/fail': open,
  'POST /api/v1/ping/{app}/{job}/{exit_code}': open,
};

/** A request matched to its row. */
export interface MatchedRoute {
  /** `METHOD /path/{param}`, the table's key; null when no row matches. */
  key: string | null;
  rule: RouteRule;
  params: Record<string, string>;
  /** The audit log's verb. */
  action: string;
}

/** The rule of a route without a row: admin only (see the module comment). */
export const UNLISTED: RouteRule = { role: 'admin' };

interface Compiled {
  key: string;
  method: string;
  pattern: RegExp;
  names: string[];
  rule: RouteRule;
  /** Fewer parameters first: `/jobs/{app}/{job}/next` is not read as a longer match. */
  params: number;
}

function compile(table: Readonly<Record<string, RouteRule>>): Compiled[] {
  return Object.entries(table)
    .map(([key, rule]) => {
      const [method = '', path = ''] = key.split(' ');
      const names: string[] = [];
      const source = path
        .split('/')
        .map((part) => {
          const m = /^\{(\w+)\}$/.exec(part);
          if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(m[1] as string);
          return '([^/]+)';
        })
        .join('/');
      return { key, method, pattern: new RegExp(`^${source}$`), names, rule, params: names.length };
    })
    .sort((a, b) => a.params - b.params);
}

const COMPILED = compile(ROUTE_ROLES);

/** The row of a request (`HEAD` as `GET`), or the admin-only rule when none matches. */
export function matchRoute(method: string, path: string): MatchedRoute {
  const m = method === 'HEAD' ? 'GET' : method;
  for (const c of COMPILED) {
    if (c.method !== m) continue;
    const hit = c.pattern.exec(path);
    if (!hit) continue;
    const params: Record<string, string> = {};
    c.names.forEach((name, i) => {
      params[name] = safeDecode(hit[i + 1] as string);
    });
    return { key: c.key, rule: c.rule, params, action: c.rule.action ?? lastWord(path) };
  }
  return { key: null, rule: UNLISTED, params: {}, action: lastWord(path) };
}

/** The role a route of the OpenAPI document needs (`x-cronix-role`), or undefined without a row. */
export function roleOf(method: string, openApiPath: string): RouteRule['role'] | undefined {
  return ROUTE_ROLES[`${method.toUpperCase()} ${openApiPath}`]?.role;
}

function lastWord(path: string): string {
  return path.split('/').filter(Boolean).at(-1) ?? path;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
