/**
 * The apps a request acts on, for a credential limited to apps (SPEC §18): one reader per
 * {@link AppsFrom} of the route table (`route-roles.ts`), asked by the access middleware
 * (`authorize.ts`) before the handler runs, so no handler has to remember it.
 *
 * - `path`: the route's `{app}`;
 * - `run`, `backfill`: the app of the run or backfill `{id}`, read from the store;
 * - `body`: the JSON body's `"app"` (a bulk replay's filter, a freeze's scope); absent, null or
 *   empty means **every app**, which only a credential of every app may ask for;
 * - `body-runs`: the apps of the runs the body's `"run_ids"` lists.
 *
 * A target that cannot be found (no such run, no such backfill) or a body that cannot be read is
 * answered here as the handler would answer it (404, 400): what cannot be shown to be within the
 * credential's apps is never handed to the handler. The body is read through Hono's request,
 * which keeps its text, so the handler reads the same bytes again.
 */
import type { Context } from 'hono';
import { echo, echoValue } from '../contract/echo.js';
import type { Store } from '../daemon/store/types.js';
import type { AppsFrom } from './route-roles.js';

/** What a request acts on: some apps, every app, or an answer that ends it here. */
export type Target =
  | { kind: 'apps'; apps: string[] }
  | { kind: 'every' }
  | {
      kind: 'answer';
      status: 400 | 404;
      code: 'invalid_request' | 'not_found';
      message: string;
      path?: string;
    };

const notFound = (message: string): Target => ({
  kind: 'answer',
  status: 404,
  code: 'not_found',
  message,
});
const invalid = (path: string, message: string): Answer => ({
  kind: 'answer',
  status: 400,
  code: 'invalid_request',
  message,
  path,
});

type Answer = Extract<Target, { kind: 'answer' }>;

/** The JSON object of the body (empty: `{}`), as the handlers read it; else the 400. */
async function bodyOf(c: Context): Promise<{ json: Record<string, unknown> } | Answer> {
  const text = await c.req.text();
  if (text.trim() === '') return { json: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return invalid('', 'request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return invalid('', 'request body must be a JSON object');
  return { json: parsed as Record<string, unknown> };
}

/** The apps of the runs `ids` (404 naming the first unknown one). */
async function appsOfRuns(store: Store, ids: readonly string[]): Promise<Target> {
  const apps = new Set<string>();
  for (const id of ids) {
    const run = await store.getRun(id);
    if (!run) return notFound(`no run ${echo(id)}`);
    apps.add(run.app);
  }
  return { kind: 'apps', apps: [...apps] };
}

/**
 * The apps the request acts on (see the module comment).
 * @param params the route's path parameters, decoded
 * @throws the store's error when a target cannot be read (the API answers it 503)
 */
export async function targetOf(
  from: AppsFrom,
  c: Context,
  params: Record<string, string>,
  store: Store,
): Promise<Target> {
  switch (from) {
    case 'path':
      return { kind: 'apps', apps: [params['app'] ?? ''] };
    case 'run':
      return appsOfRuns(store, [params['id'] ?? '']);
    case 'backfill': {
      const id = params['id'] ?? '';
      const b = await store.getBackfill(id);
      return b ? { kind: 'apps', apps: [b.app] } : notFound(`no backfill ${echo(id)}`);
    }
    case 'body': {
      const b = await bodyOf(c);
      if (!('json' in b)) return b;
      const app = b.json['app'];
      if (app === undefined || app === null || app === '') return { kind: 'every' };
      if (typeof app !== 'string')
        return invalid('app', `expected an app name, found ${echoValue(app)}`);
      return { kind: 'apps', apps: [app] };
    }
    case 'body-runs': {
      const b = await bodyOf(c);
      if (!('json' in b)) return b;
      const ids = b.json['run_ids'];
      if (!Array.isArray(ids) || ids.length < 1 || ids.length > 1000)
        return invalid('run_ids', `expected a list of 1 to 1000 run ids, found ${echoValue(ids)}`);
      if (!ids.every((i): i is string => typeof i === 'string'))
        return invalid('run_ids', `expected a list of run ids, found ${echoValue(ids)}`);
      return appsOfRuns(store, ids);
    }
  }
}
