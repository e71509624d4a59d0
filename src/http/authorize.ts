/**
 * The access middleware of `/api/*` (SPEC §18): for each request, its row of the route table
 * (`route-roles.ts`), the caller (`access.ts`: a token, a session, or `--no-auth`), whether the
 * caller's role and apps allow the route — a refusal is 403 with the §7 error naming the role
 * needed — and, for every mutation, a row of the audit log once it is answered: who, what, which
 * app/job/run, when, from where, and how it ended.
 *
 * `from` (the row's `source`): `ui` for a web UI session (or, under `--no-auth`, a same-origin
 * browser request), `cli` for a bearer request that says `X-Cronix-Client: cli` (the `cronix`
 * command line talks to the API, never to the store; the header is the client's word, like a
 * User-Agent, and only labels the row), `api` otherwise. A standby of a cluster hands the verbs
 * to the leader (SPEC §10); it writes the row itself, so the row names the original caller, with
 * `replica` (the standby) and `forwarded: true`. A row that cannot be written is logged and does
 * not change the answer. Requests refused before a caller is known (401, 429, CSRF) are logged,
 * not audited: they have no "who".
 */
import type { Context, MiddlewareHandler } from 'hono';
import { cut } from '../contract/echo.js';
import type { DaemonControl } from '../daemon/control.js';
import { roleAtLeast, type AuditSource } from '../daemon/store/access-types.js';
import type { Store } from '../daemon/store/types.js';
import { remoteAddress, type Access } from './access.js';
import { targetOf } from './route-apps.js';
import { appScoped, matchRoute, type MatchedRoute } from './route-roles.js';
import { errorJson } from './serialize.js';
import type { Principal } from './tokens.js';

/** Header by which the `cronix` CLI says it is the CLI. */
export const CLIENT_HEADER = 'x-cronix-client';

/** Who made a request, as the audit log records them. */
export interface Caller {
  principal: Principal;
  source: AuditSource;
  address: string | null;
}

/** What a handler adds to its request's audit row. */
export interface AuditNote {
  detail?: string;
  app?: string;
  job?: string;
  run?: string;
}

const callers = new WeakMap<Request, Caller>();
const notes = new WeakMap<Request, AuditNote>();

/** The caller of an authorized request (absent on public routes). */
export function callerOf(c: Context): Caller | undefined {
  return callers.get(c.req.raw);
}

/** Adds to the audit row of this request. */
export function noteAudit(c: Context, note: AuditNote): void {
  notes.set(c.req.raw, { ...notes.get(c.req.raw), ...note });
}

const describe = (p: Principal): string =>
  p.whoKind === 'token' ? `token "${cut(p.who, 100)}"` : `user "${cut(p.who, 100)}"`;

/** An answer that ends a request before its handler: a refusal (403), or the target's 400/404. */
interface Stop {
  status: 400 | 403 | 404;
  code: 'forbidden' | 'invalid_request' | 'not_found';
  message: string;
  path?: string;
  /** The app refused, for the audit row. */
  app?: string;
}

const appsOf = (p: Principal): string =>
  `app${p.apps.length > 1 ? 's' : ''} ${p.apps.map((a) => cut(a, 100)).join(', ')}`;

/**
 * Why the route is stopped for `p`, or null when it may go on: the role, then — for a credential
 * limited to apps, on a route above `viewer` — every app the request acts on (`route-apps.ts`).
 */
async function stopOf(
  route: MatchedRoute,
  p: Principal,
  c: Context,
  store: Store,
): Promise<Stop | null> {
  const needed = route.rule.role;
  if (needed === 'public') return null;
  const forbidden = (message: string, app?: string): Stop => ({
    status: 403,
    code: 'forbidden',
    message,
    ...(app !== undefined ? { app } : {}),
  });
  const what = route.key ?? 'this route';
  if (!roleAtLeast(p.role, needed))
    return forbidden(`${what} needs the ${needed} role; ${describe(p)} has the ${p.role} role`);
  if (p.apps.length === 0 || !appScoped(route.rule)) return null;
  if (route.rule.apps === undefined)
    return forbidden(
      `${describe(p)} may act on ${appsOf(p)} only; ${what} is not limited to apps: it needs the ${needed} role for every app`,
    );
  const target = await targetOf(route.rule.apps, c, route.params, store);
  if (target.kind === 'answer') return target;
  if (target.kind === 'every')
    return forbidden(
      `${describe(p)} may act on ${appsOf(p)} only; without an "app" ${what} acts on every app: name ${p.apps.length > 1 ? 'one of its apps' : 'its app'} in "app"`,
    );
  const outside = target.apps.find((a) => !p.apps.includes(a));
  if (outside === undefined) return null;
  const app = cut(outside, 100);
  return forbidden(
    `${describe(p)} may act on ${appsOf(p)} only, not on ${app}; this needs the ${needed} role for app ${app}`,
    outside,
  );
}

function sourceOf(c: Context, via: 'bearer' | 'session' | 'none'): AuditSource {
  if (c.req.header(CLIENT_HEADER) === 'cli') return 'cli';
  if (via === 'session') return 'ui';
  if (via === 'none' && c.req.header('sec-fetch-site') === 'same-origin') return 'ui';
  return 'api';
}

/** The middleware (see the module comment). */
export function authorize(deps: {
  access: Access;
  store: Store;
  scheduler: DaemonControl;
}): MiddlewareHandler {
  const { access, store, scheduler } = deps;
  let replica: Promise<string | null> | null = null;
  const replicaId = (): Promise<string | null> => {
    if (!scheduler.cluster) return Promise.resolve(null);
    replica ??= scheduler.cluster().then(
      (v) => v.self.replica,
      () => ((replica = null), null),
    );
    return replica;
  };

  const record = async (c: Context, route: MatchedRoute, caller: Caller): Promise<void> => {
    const res = c.res;
    const body = (await res
      .clone()
      .json()
      .catch(() => null)) as { run?: { id?: unknown }; error?: { message?: unknown } } | null;
    const note = notes.get(c.req.raw) ?? {};
    const status = res.status;
    const errorMessage = typeof body?.error?.message === 'string' ? body.error.message : undefined;
    const runId = typeof body?.run?.id === 'string' ? body.run.id : undefined;
    const standby = scheduler.role?.() === 'standby';
    try {
      await store.appendAudit({
        at: scheduler.now(),
        who: caller.principal.who,
        whoKind: caller.principal.whoKind,
        role: caller.principal.whoKind === 'anonymous' ? null : caller.principal.role,
        action: route.action,
        app: note.app ?? route.params['app'] ?? null,
        job: note.job ?? route.params['job'] ?? null,
        run: note.run ?? route.params['id'] ?? runId ?? null,
        source: caller.source,
        address: caller.address,
        replica: await replicaId(),
        forwarded: standby && route.rule.role === 'operator' && status !== 403,
        result: status < 400 ? 'ok' : status === 403 ? 'refused' : 'failed',
        status,
        detail: cut(note.detail ?? errorMessage ?? '', 300) || null,
      });
    } catch (err) {
      access.warn(
        `audit: the row of ${route.action} by ${caller.principal.who} could not be written: ${(err as Error).message}`,
      );
    }
  };

  return async (c, next) => {
    const route = matchRoute(c.req.method, c.req.path);
    if (route.rule.role === 'public') return next();
    const mutation = c.req.method !== 'GET' && c.req.method !== 'HEAD';
    const verdict = await access.check(c, mutation ? 'mutation' : 'read');
    if (!verdict.ok) return access.refuse(c, verdict);
    const caller: Caller = {
      principal: verdict.principal,
      source: sourceOf(c, verdict.via),
      address: remoteAddress(c) ?? null,
    };
    callers.set(c.req.raw, caller);
    const stop = await stopOf(route, verdict.principal, c, store);
    if (stop !== null) {
      if (stop.app !== undefined) noteAudit(c, { app: stop.app });
      c.res = c.json(errorJson(stop.code, stop.message, stop.path), stop.status);
      if (mutation) await record(c, route, caller);
      return c.res;
    }
    await next();
    if (mutation) await record(c, route, caller);
  };
}

/** Records a request a public route decided itself (a login, a logout). */
export async function auditPublic(
  c: Context,
  deps: { store: Store; scheduler: DaemonControl; warn: (m: string) => void },
  row: { who: Principal; action: string; status: number; detail?: string },
): Promise<void> {
  try {
    await deps.store.appendAudit({
      at: deps.scheduler.now(),
      who: row.who.who,
      whoKind: row.who.whoKind,
      role: row.who.role,
      action: row.action,
      app: null,
      job: null,
      run: null,
      source: c.req.header(CLIENT_HEADER) === 'cli' ? 'cli' : 'ui',
      address: remoteAddress(c) ?? null,
      replica: null,
      forwarded: false,
      result: row.status < 400 ? 'ok' : row.status === 403 ? 'refused' : 'failed',
      status: row.status,
      detail: row.detail ?? null,
    });
  } catch (err) {
    deps.warn(`audit: the row of ${row.action} could not be written: ${(err as Error).message}`);
  }
}
