/**
 * Roles (SPEC §18) on a real daemon (in-process, real HTTP server, real SQLite ledger): the one
 * route table covers every route the API serves and every operation of the OpenAPI document
 * (`x-cronix-role`); a walk of every documented route with a token of every role is answered
 * 403 — naming the role needed — exactly when the role is below the route's; app-scoped
 * operators act within their apps only: a walk of every route above viewer, for an app outside the
 * token's (in the path, the body, or behind a run or backfill id) and for every app (a body
 * without "app"), is 403 and changes nothing, while the same walk inside its app is served; tokens are shown once, listed without value or hash,
 * refused once revoked (also after a restart) or expired; every mutation leaves an audit row.
 * The web UI's session says its role and apps (what the UI shows actions for), and every route
 * the UI asks about (`may('METHOD /path')`, src/http/ui/app/access.ts) is a row of the table.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, roleAtLeast, type Role } from '../../src/daemon/store/access-types.js';
import { createApi } from '../../src/http/api.js';
import { openApiFor } from '../../src/http/openapi.js';
import { appScoped, matchRoute, ROUTE_ROLES, type RouteRule } from '../../src/http/route-roles.js';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { hashToken } from '../../src/http/tokens.js';
import { until } from '../helpers/common.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let dir: string;
let daemon: DaemonHandle;
let runId: string;
const tokens: Record<string, string> = {};
const env = { ROLES_SECRET: 'roles-secret-0123456789abc' };

function manifestFile(): string {
  const file = join(dir, 'manifest.json');
  const job = (name: string) => ({
    name,
    schedule: '0 0 1 1 *',
    request: { url: `${sink.url}/${name}` },
    policy: { retries: { max_attempts: 1 } },
    auth: { secret_refs: ['env:ROLES_SECRET'] },
  });
  writeFileSync(
    file,
    JSON.stringify({ version: 1, app: 'shop', jobs: [job('a'), job('b'), job('fails')] }),
  );
  const other = join(dir, 'billing.json');
  writeFileSync(
    other,
    JSON.stringify({ version: 1, app: 'billing', jobs: [job('settle'), job('fails')] }),
  );
  return file;
}

const start = (): Promise<DaemonHandle> =>
  startDaemon({
    manifests: [join(dir, 'manifest.json'), join(dir, 'billing.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env,
  });

type Answer = { status: number; json: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

async function api(token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const controller = new AbortController();
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: controller.signal,
  });
  // the event stream never ends: its status is the answer
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, json: null };
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

const admin = (): string => daemon.token as string;

async function createToken(name: string, role: Role, apps: string[] = []): Promise<string> {
  const r = await api(admin(), 'POST', '/api/v1/tokens', { name, role, apps });
  expect(r.status).toBe(201);
  return r.json.token as string;
}

beforeAll(async () => {
  // the jobs named `fails` fail (one attempt): their runs are dead letters
  sink = await startSink((_i, r) => ({ status: r.url.startsWith('/fails') ? 500 : 200 }));
  dir = mkdtempSync(join(tmpdir(), 'cronix-roles-'));
  manifestFile();
  daemon = await start();
  for (const role of ROLES) tokens[role] = await createToken(`t-${role}`, role);
  tokens['scoped'] = await createToken('t-scoped', 'operator', ['billing']);
  const t = await api(admin(), 'POST', '/api/v1/jobs/shop/a/trigger');
  runId = t.json.run.id as string;
  await until(
    async () =>
      (await api(admin(), 'GET', `/api/v1/runs/${runId}`)).json.phase === 'ended' || undefined,
    20_000,
  );
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

/** Every operation of the document, cluster route included. */
function documented(): { method: string; path: string; role: string }[] {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const doc = openApiFor(true) as { paths: Record<string, Record<string, any>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      role: op['x-cronix-role'] as string,
    })),
  );
}

describe('one route table', () => {
  it('every route the API serves under /api has a row', () => {
    const app = createApi({
      scheduler: daemon.scheduler,
      store: daemon.store,
      token: 'a-token-of-twenty-chars',
    });
    const routes = app.routes;
    expect(routes.length).toBeGreaterThan(10);
    const missing = routes
      .filter((r) => r.path.startsWith('/api/') && r.method !== 'ALL')
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
      .filter((key) => !(key in ROUTE_ROLES));
    expect(missing, 'routes without a role: add them to src/http/route-roles.ts').toEqual([]);
  });

  it('every operation of the OpenAPI document states the role of its row', () => {
    const ops = documented();
    expect(ops.length).toBeGreaterThan(15);
    for (const op of ops) {
      if (!op.path.startsWith('/api/')) {
        expect(op.role, `${op.method} ${op.path}`).toBe('public');
        continue;
      }
      const row = ROUTE_ROLES[`${op.method} ${op.path}`];
      expect(row, `${op.method} ${op.path} has no row in src/http/route-roles.ts`).toBeDefined();
      expect(op.role, `${op.method} ${op.path}`).toBe(row?.role);
    }
  });

  it('every route the web UI asks about is a row (a typo would hide a button for good)', () => {
    const dir = join(process.cwd(), 'src/http/ui/app');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
      /\.tsx?$/.test(f),
    );
    const asked = files.flatMap((f) =>
      [...readFileSync(join(dir, f), 'utf8').matchAll(/\bmay\(\s*'([^']+)'/g)].map((m) => m[1]),
    );
    expect(asked.length).toBeGreaterThanOrEqual(10);
    expect(asked.filter((k) => !(k! in ROUTE_ROLES))).toEqual([]);
  });

  it('a route without a row needs admin at run time', () => {
    expect(matchRoute('POST', '/api/v1/something/new').rule.role).toBe('admin');
    expect(matchRoute('GET', '/api/v1/jobs/shop/a').key).toBe('GET /api/v1/jobs/{app}/{job}');
    expect(matchRoute('GET', '/api/v1/jobs/shop/a/next').key).toBe(
      'GET /api/v1/jobs/{app}/{job}/next',
    );
  });
});

describe('every documented route with every role', () => {
  it('is refused (403, naming the role) exactly when the role is below the route’s', async () => {
    const fill = (path: string): string =>
      path
        .replace('{app}', 'shop')
        .replace('{job}', 'b')
        .replace('{id}', runId)
        .replace('{name}', 'no-such-token');
    const bodies: Record<string, unknown> = {
      'POST /api/v1/tokens': { name: 'bad name!', role: 'viewer' }, // 400 once allowed
    };
    const seen: string[] = [];
    for (const op of documented()) {
      if (!op.path.startsWith('/api/') || op.role === 'public') continue;
      for (const role of ROLES) {
        const key = `${op.method} ${op.path}`;
        const r = await api(tokens[role] as string, op.method, fill(op.path), bodies[key]);
        const allowed = roleAtLeast(role, op.role as Role);
        seen.push(`${key} ${role} ${r.status}`);
        if (allowed) {
          expect([401, 403], `${key} as ${role}: ${JSON.stringify(r.json)}`).not.toContain(
            r.status,
          );
        } else {
          expect(r.status, `${key} as ${role}`).toBe(403);
          expect(r.json.error.code).toBe('forbidden');
          expect(r.json.error.message).toContain(`needs the ${op.role} role`);
          expect(r.json.error.message).toContain(`has the ${role} role`);
        }
      }
    }
    expect(seen.length).toBeGreaterThanOrEqual(3 * 18);
  });

  it("a viewer's trigger is 403 with the §7 error naming operator, and is audited as refused", async () => {
    const r = await api(tokens['viewer'] as string, 'POST', '/api/v1/jobs/shop/a/trigger');
    expect(r.status).toBe(403);
    expect(r.json).toEqual({
      error: {
        code: 'forbidden',
        message:
          'POST /api/v1/jobs/{app}/{job}/trigger needs the operator role; token "t-viewer" has the viewer role',
      },
    });
    const audit = await api(admin(), 'GET', '/api/v1/audit?who=t-viewer&action=trigger&limit=1');
    expect(audit.json.audit[0]).toMatchObject({
      who: 't-viewer',
      who_kind: 'token',
      role: 'viewer',
      action: 'trigger',
      app: 'shop',
      job: 'a',
      from: 'api',
      result: 'refused',
      status: 403,
      forwarded: false,
    });
  });

  it('an operator limited to billing acts on billing, not on shop (nor on a shop run)', async () => {
    const scoped = tokens['scoped'] as string;
    expect((await api(scoped, 'POST', '/api/v1/jobs/billing/settle/pause')).status).toBe(200);
    expect((await api(scoped, 'POST', '/api/v1/jobs/billing/settle/resume')).status).toBe(200);
    const shop = await api(scoped, 'POST', '/api/v1/jobs/shop/a/pause');
    expect(shop.status).toBe(403);
    expect(shop.json.error.message).toBe(
      'token "t-scoped" may act on app billing only, not on shop; this needs the operator role for app shop',
    );
    expect((await api(scoped, 'POST', `/api/v1/runs/${runId}/replay`)).status).toBe(403);
    expect((await api(scoped, 'GET', `/api/v1/runs/${runId}/log`)).status).toBe(403);
    // reads are not limited
    expect((await api(scoped, 'GET', '/api/v1/jobs')).status).toBe(200);
  });
});

describe('an operator limited to an app, on every route above viewer', () => {
  /** Triggers `app/job` as admin and waits for its run to end; its id. */
  async function ended(app: string, job: string): Promise<string> {
    const t = await api(admin(), 'POST', `/api/v1/jobs/${app}/${job}/trigger`);
    expect(t.status).toBe(202);
    const id = t.json.run.id as string;
    await until(
      async () =>
        (await api(admin(), 'GET', `/api/v1/runs/${id}`)).json.phase === 'ended' || undefined,
      20_000,
    );
    return id;
  }

  async function backfill(app: string, job: string): Promise<string> {
    const b = await api(admin(), 'POST', `/api/v1/jobs/${app}/${job}/backfills`, {
      from: '2020-01-01T00:00:00Z',
      to: '2024-06-01T00:00:00Z',
    });
    expect(b.status, JSON.stringify(b.json)).toBe(202);
    return b.json.backfill.id as string;
  }

  const jobOf: Record<string, string> = { shop: 'fails', billing: 'fails' };

  /** The bodies of the rows whose apps are in their body: acting on `app`. */
  const BODIES: Record<string, (app: string, run: string) => Record<string, unknown>> = {
    'POST /api/v1/dead-letters/replay': (app) => ({ app }),
    'POST /api/v1/dead-letters/dismiss': (_app, run) => ({ run_ids: [run], note: 'roles test' }),
    'POST /api/v1/freezes': (app) => ({ app, reason: 'roles test' }),
    'POST /api/v1/freezes/unfreeze': (app) => ({ app }),
  };

  /** The request of the row `key` acting on `app` (its run and backfill given). */
  function requestOf(
    key: string,
    app: string,
    ids: { run: string; backfill: string },
  ): { method: string; path: string; body?: Record<string, unknown> } {
    const [method = '', template = ''] = key.split(' ');
    const path = template
      .replace('{app}', app)
      .replace('{job}', jobOf[app] as string)
      .replace('{service}', 'worker')
      .replace('{id}', template.startsWith('/api/v1/backfills/') ? ids.backfill : ids.run);
    const body = BODIES[key]?.(app, ids.run);
    return { method, path, ...(body !== undefined ? { body } : {}) };
  }

  const scopedRows = (): [string, RouteRule][] =>
    Object.entries(ROUTE_ROLES).filter(([, rule]) => rule.role === 'operator');

  it('every operator row says where its apps are (a new verb cannot forget it)', () => {
    const rows = scopedRows();
    expect(rows.length).toBeGreaterThanOrEqual(15);
    expect(rows.filter(([, rule]) => rule.apps === undefined).map(([key]) => key)).toEqual([]);
    // the walks below send a body to each row that finds its apps in one
    const inBody = rows.filter(([, r]) => r.apps === 'body' || r.apps === 'body-runs');
    expect(inBody.map(([key]) => key).sort()).toEqual(Object.keys(BODIES).sort());
    // every row above viewer is limited by a credential's apps
    for (const [key, rule] of Object.entries(ROUTE_ROLES))
      expect(appScoped(rule), key).toBe(rule.role === 'operator' || rule.role === 'admin');
  });

  it('is refused (403, naming the app) on another app, and for every app; nothing changes', async () => {
    const scoped = tokens['scoped'] as string; // operator of billing
    const ids = { run: await ended('shop', 'fails'), backfill: await backfill('shop', 'a') };
    const before = await api(admin(), 'GET', '/api/v1/dead-letters?app=shop');
    expect(before.json.dead_letters.map((r: { id: string }) => r.id)).toContain(ids.run);

    const walked: string[] = [];
    for (const [key] of scopedRows()) {
      const r = requestOf(key, 'shop', ids);
      const answer = await api(scoped, r.method, r.path, r.body);
      walked.push(key);
      expect(answer.status, `${key} on shop: ${JSON.stringify(answer.json)}`).toBe(403);
      expect(answer.json.error).toEqual({
        code: 'forbidden',
        message:
          'token "t-scoped" may act on app billing only, not on shop; this needs the operator role for app shop',
      });
      if (r.body?.['app'] === undefined) continue;
      // a body without an app acts on every app
      const every = { ...r.body, app: undefined };
      const all = await api(scoped, r.method, r.path, every);
      expect(all.status, `${key} without app: ${JSON.stringify(all.json)}`).toBe(403);
      expect(all.json.error.message).toBe(
        `token "t-scoped" may act on app billing only; without an "app" ${key} acts on every app: name its app in "app"`,
      );
    }
    expect(walked).toEqual(expect.arrayContaining(['POST /api/v1/backfills/{id}/cancel']));

    // nothing was done: no freeze, the dead letter is there, the backfill was not cancelled
    expect((await api(admin(), 'GET', '/api/v1/freezes')).json.freezes).toEqual([]);
    const after = await api(admin(), 'GET', '/api/v1/dead-letters?app=shop');
    expect(after.json.dead_letters.map((r: { id: string }) => r.id)).toEqual(
      before.json.dead_letters.map((r: { id: string }) => r.id),
    );
    const replays = await api(admin(), 'GET', '/api/v1/runs?app=shop&job=fails');
    expect(replays.json.runs).toHaveLength(1);
    const b = await api(admin(), 'GET', `/api/v1/backfills/${ids.backfill}`);
    expect(b.json.state).not.toBe('cancelled');
    expect((await api(admin(), 'GET', '/api/v1/jobs/shop/fails')).json.paused).toBe(false);

    // the refusals are audited with the app refused
    const audit = await api(admin(), 'GET', '/api/v1/audit?who=t-scoped&action=backfill.cancel');
    expect(audit.json.audit[0]).toMatchObject({ app: 'shop', result: 'refused', status: 403 });
  });

  it('a dismissal of runs of its app and of another is refused, naming the other', async () => {
    const scoped = tokens['scoped'] as string;
    const [mine, theirs] = [await ended('billing', 'fails'), await ended('shop', 'fails')];
    const r = await api(scoped, 'POST', '/api/v1/dead-letters/dismiss', {
      run_ids: [mine, theirs],
      note: 'both',
    });
    expect(r.status).toBe(403);
    expect(r.json.error.message).toContain('not on shop');
    // an unknown run cannot be shown to be of its apps
    const unknown = await api(scoped, 'POST', '/api/v1/dead-letters/dismiss', {
      run_ids: [mine, 'no-such-run'],
      note: 'x',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toEqual({ code: 'not_found', message: 'no run "no-such-run"' });
    const dl = await api(admin(), 'GET', '/api/v1/dead-letters?app=billing');
    expect(dl.json.dead_letters.map((x: { id: string }) => x.id)).toContain(mine);
  });

  it('is served on its own app', async () => {
    const scoped = tokens['scoped'] as string;
    const ids = {
      run: await ended('billing', 'fails'),
      backfill: await backfill('billing', 'settle'),
    };
    for (const [key] of scopedRows()) {
      const r = requestOf(key, 'billing', ids);
      const answer = await api(scoped, r.method, r.path, r.body);
      expect([401, 403], `${key} on billing: ${JSON.stringify(answer.json)}`).not.toContain(
        answer.status,
      );
    }
    const dl = await api(admin(), 'GET', '/api/v1/dead-letters?app=billing');
    expect(dl.json.dead_letters.map((x: { id: string }) => x.id)).not.toContain(ids.run);
  });
});

describe('the web UI session', () => {
  /** `GET /api/v1/session` after logging in with `token`. */
  async function sessionOf(token: string): Promise<Record<string, unknown>> {
    const login = await fetch(`${daemon.url}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const res = await fetch(`${daemon.url}/api/v1/session`, { headers: { cookie } });
    return (await res.json()) as Record<string, unknown>;
  }

  it('says the role and the apps of its token (empty: every app)', async () => {
    expect(await sessionOf(tokens['scoped'] as string)).toMatchObject({
      authenticated: true,
      who: 't-scoped',
      role: 'operator',
      apps: ['billing'],
    });
    expect(await sessionOf(tokens['viewer'] as string)).toMatchObject({
      who: 't-viewer',
      role: 'viewer',
      apps: [],
    });
    const none = await fetch(`${daemon.url}/api/v1/session`);
    expect(await none.json()).toMatchObject({ authenticated: false, role: null, apps: [] });
    // the OpenAPI document describes it
    const doc = openApiFor(true) as {
      components: { schemas: { Session: { properties: Record<string, unknown> } } };
    };
    expect(doc.components.schemas.Session.properties['apps']).toMatchObject({ type: 'array' });
  });
});

describe('tokens', () => {
  it('are shown once, listed without value or hash, and checked field by field', async () => {
    const created = await api(admin(), 'POST', '/api/v1/tokens', {
      name: 'ci-deploy',
      role: 'operator',
      apps: ['shop'],
      expires_at: '2099-01-01T00:00:00Z',
    });
    expect(created.status).toBe(201);
    const value = created.json.token as string;
    expect(value).toMatch(/^cronix_[A-Za-z0-9_-]{43}$/);
    expect(created.json).toMatchObject({
      name: 'ci-deploy',
      role: 'operator',
      apps: ['shop'],
      created_by: 'default',
      expires_at: '2099-01-01T00:00:00.000Z',
      state: 'active',
    });
    const list = await api(admin(), 'GET', '/api/v1/tokens');
    const text = JSON.stringify(list.json);
    expect(text).not.toContain(value);
    expect(text).not.toContain(hashToken(value));
    expect(text).not.toContain(daemon.token as string);
    expect(list.json.tokens.map((t: { name: string }) => t.name)).toEqual([
      'ci-deploy',
      'default',
      't-admin',
      't-operator',
      't-scoped',
      't-viewer',
    ]);
    expect(list.json.tokens[1]).toMatchObject({ name: 'default', kind: 'file', role: 'admin' });
    const again = await api(admin(), 'POST', '/api/v1/tokens', {
      name: 'ci-deploy',
      role: 'viewer',
    });
    expect(again.status).toBe(409);
    for (const [body, path] of [
      [{ name: 'x y', role: 'viewer' }, 'name'],
      [{ name: 'x', role: 'root' }, 'role'],
      [{ name: 'x', role: 'admin', apps: ['shop'] }, 'apps'],
      [{ name: 'x', role: 'viewer', apps: ['Not An App'] }, 'apps'],
      [{ name: 'x', role: 'viewer', expires_at: 'tomorrow' }, 'expires_at'],
      [{ name: 'x', role: 'viewer', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 'x', role: 'viewer', colour: 'red' }, 'colour'],
    ] as const) {
      const r = await api(admin(), 'POST', '/api/v1/tokens', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.path).toBe(path);
    }
    // the operator token works as an operator of shop
    expect((await api(value, 'POST', '/api/v1/jobs/shop/b/pause')).status).toBe(200);
    expect((await api(value, 'POST', '/api/v1/jobs/shop/b/resume')).status).toBe(200);
    expect((await api(value, 'GET', '/api/v1/tokens')).status).toBe(403);
  });

  it('a revoked token is refused at once and after a restart; an expired one is refused', async () => {
    const value = await createToken('short-lived', 'viewer');
    expect((await api(value, 'GET', '/api/v1/jobs')).status).toBe(200);
    const revoked = await api(admin(), 'DELETE', '/api/v1/tokens/short-lived');
    expect(revoked.status).toBe(200);
    expect((await api(value, 'GET', '/api/v1/jobs')).status).toBe(401);
    expect((await api(admin(), 'DELETE', '/api/v1/tokens/short-lived')).status).toBe(404);

    const expiring = await api(admin(), 'POST', '/api/v1/tokens', {
      name: 'expiring',
      role: 'viewer',
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    const soon = expiring.json.token as string;
    expect((await api(soon, 'GET', '/api/v1/jobs')).status).toBe(200);
    await until(
      async () => (await api(soon, 'GET', '/api/v1/jobs')).status === 401 || undefined,
      10_000,
    );

    await daemon.stop(1000);
    daemon = await start();
    expect((await api(value, 'GET', '/api/v1/jobs')).status).toBe(401);
    expect((await api(tokens['viewer'] as string, 'GET', '/api/v1/jobs')).status).toBe(200);
  });

  it('the token file token is the admin "default"; revoking it refuses it, also after a restart', async () => {
    const spare = await createToken('spare-admin', 'admin');
    expect((await api(admin(), 'GET', '/api/v1/tokens')).status).toBe(200);
    expect((await api(spare, 'DELETE', '/api/v1/tokens/default')).status).toBe(200);
    expect((await api(admin(), 'GET', '/api/v1/jobs')).status).toBe(401);
    await daemon.stop(1000);
    daemon = await start();
    expect((await api(admin(), 'GET', '/api/v1/jobs')).status).toBe(401);
    expect((await api(spare, 'GET', '/api/v1/tokens')).status).toBe(200);
  });
});
