/**
 * The API the web UI uses, over a real daemon (no browser): the session login
 * and its cookie, CSRF and cross-origin refusals, the event stream resumed
 * with Last-Event-ID, the jobs view in one store query, the new read views,
 * and the static UI with its security headers.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import type { Store } from '../../src/daemon/store/types.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { readEvents } from '../helpers/sse.js';

let sink: Sink;
let daemon: DaemonHandle;
let dir: string;
const storeCalls: string[] = [];

beforeAll(async () => {
  sink = await startSink((_, r) => ({ status: 200, delayMs: r.url.startsWith('/slow') ? 300 : 0 }));
  dir = mkdtempSync(join(tmpdir(), 'cronix-ui-api-'));
  const file = join(dir, 'manifest.json');
  const auth = { secret_refs: ['env:UI_API_SECRET'] };
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [
        { name: 'a', schedule: '0 0 1 1 *', request: { url: `${sink.url}/a` }, auth },
        { name: 'b', schedule: '*/15 * * * *', request: { url: `${sink.url}/slow` }, auth },
        {
          name: 'berlin',
          schedules: ['30 2 25-31 3,10 *', '0 12 * * *'],
          timezone: 'Europe/Berlin',
          request: { url: `${sink.url}/a`, headers: { 'X-Api-Key': 'k-123-secret' } },
          auth,
        },
      ],
    }),
  );
  daemon = await startDaemon({
    manifests: [file],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { UI_API_SECRET: 'ui-api-secret-0123456789' },
    openStore: async (d) => {
      const { openSqliteStore } = await import('../../src/daemon/store/sqlite.js');
      const store = await openSqliteStore(join(d, 'ledger.sqlite'));
      // counts the store reads the API makes
      return new Proxy(store, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            storeCalls.push(String(prop));
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      }) as Store;
    },
  });
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

/**
 * Calls the daemon; every API route needs credentials, so a request that brings none (no
 * cookie, no Authorization) to a route other than the session gets the bearer token.
 */
const call = (path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  if (
    path.startsWith('/api/') &&
    !path.startsWith('/api/v1/session') &&
    !headers.has('cookie') &&
    !headers.has('authorization')
  )
    headers.set('authorization', `Bearer ${daemon.token}`);
  return fetch(`${daemon.url}${path}`, { ...init, headers });
};
const bearer = () => ({ authorization: `Bearer ${daemon.token}` });

async function login(): Promise<{ cookie: string; csrf: string }> {
  const res = await call('/api/v1/session', {
    method: 'POST',
    body: JSON.stringify({ token: daemon.token }),
  });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(
    /^cronix_session=v2\.[^;]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/,
  );
  const body = (await res.json()) as { authenticated: boolean; csrf_token: string };
  expect(body.authenticated).toBe(true);
  return { cookie: setCookie.split(';')[0]!, csrf: body.csrf_token };
}

describe('session and CSRF', () => {
  it('a wrong token is 401 in the API error shape and sets no cookie', async () => {
    const res = await call('/api/v1/session', {
      method: 'POST',
      body: '{"token":"nope-nope-nope-nope"}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(await res.json()).toEqual({
      error: { code: 'unauthorized', message: 'wrong, revoked or expired token' },
    });
    const bad = await call('/api/v1/session', { method: 'POST', body: '[1' });
    expect(bad.status).toBe(400);
  });

  it('a session mutates with its CSRF token, and only with it', async () => {
    const { cookie, csrf } = await login();
    const state = await (await call('/api/v1/session', { headers: { cookie } })).json();
    expect(state).toMatchObject({ auth: 'token', authenticated: true, csrf_token: csrf });
    const without = await call('/api/v1/jobs/shop/a/pause', {
      method: 'POST',
      headers: { cookie },
    });
    expect(without.status).toBe(403);
    expect((await without.json()).error.code).toBe('forbidden');
    const wrong = await call('/api/v1/jobs/shop/a/pause', {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) },
    });
    expect(wrong.status).toBe(403);
    const ok = await call('/api/v1/jobs/shop/a/pause', {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(ok.status).toBe(200);
    await call('/api/v1/jobs/shop/a/resume', { method: 'POST', headers: bearer() });
    const forged = cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const f = await call('/api/v1/jobs/shop/a/pause', {
      method: 'POST',
      headers: { cookie: forged, 'x-csrf-token': csrf },
    });
    expect(f.status).toBe(401);
  });

  it('logout revokes the cookie', async () => {
    const { cookie, csrf } = await login();
    const out = await call('/api/v1/session', { method: 'DELETE', headers: { cookie } });
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    const after = await call('/api/v1/jobs/shop/a/pause', {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(after.status).toBe(401);
  });

  it('a mutation from another origin is refused even with the bearer token', async () => {
    const host = new URL(daemon.url).host;
    for (const headers of <Record<string, string>[]>[
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
    ]) {
      const res = await call('/api/v1/jobs/shop/a/pause', {
        method: 'POST',
        headers: { ...bearer(), ...headers },
      });
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe('forbidden');
    }
    const same = await call('/api/v1/jobs/shop/a/trigger', {
      method: 'POST',
      headers: { ...bearer(), origin: `http://${host}` },
    });
    expect(same.status).toBe(202);
  });
});

describe('event stream', () => {
  it('streams run changes and resumes after Last-Event-ID with exactly the missed events', async () => {
    // shop/a is Forbid: let earlier runs end, so this one starts instead of being skipped
    // (a run holds the job from the moment it is planned, before it is running)
    for (let i = 0; i < 100; i++) {
      const r = await (await call('/api/v1/runs?app=shop&job=a')).json();
      if (r.runs.every((x: { phase: string }) => x.phase === 'ended')) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    const first = await call('/api/v1/events?app=shop&job=a');
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const ready = await readEvents(first, (es) => es.some((e) => e.event === 'ready'));
    const lastId = ready.find((e) => e.event === 'ready')!.id!;
    expect(lastId).toMatch(/^[0-9a-f]{8}\.\d+$/);

    // while disconnected: a run of shop/a (wanted) and of shop/b (filtered out)
    const t = await (
      await call('/api/v1/jobs/shop/a/trigger', { method: 'POST', headers: bearer() })
    ).json();
    await call('/api/v1/jobs/shop/b/trigger', { method: 'POST', headers: bearer() });
    await new Promise((r) => setTimeout(r, 300));

    const again = await call('/api/v1/events?app=shop&job=a', {
      headers: { 'last-event-id': lastId },
    });
    const missed = await readEvents(again, (es) => es.some((e) => e.event === 'ready'));
    const runs = missed
      .filter((e) => e.event === 'run')
      .map((e) => JSON.parse(e.data))
      .filter((r) => r.run.id === t.run.id);
    expect(runs.map((r) => [r.change, r.run.id])).toEqual([
      ['recorded', t.run.id],
      ['started', t.run.id],
      ['ended', t.run.id],
    ]);
    expect(runs.every((r) => r.run.job === 'a')).toBe(true);
    const ids = missed.filter((e) => e.id).map((e) => Number(e.id!.split('.')[1]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('an id it cannot resume from gets a reset', async () => {
    for (const id of ['00000000.1', 'garbage', `${'f'.repeat(8)}.99999999`]) {
      const res = await call('/api/v1/events', { headers: { 'last-event-id': id } });
      const es = await readEvents(res, (x) => x.some((e) => e.event === 'ready'));
      expect(es[0]!.event).toBe('reset');
    }
    expect((await call('/api/v1/events?x=1')).status).toBe(400);
  });

  it('an open stream does not hold up the daemon’s stop', async () => {
    const other = await startDaemon({
      manifests: [join(dir, 'manifest.json')],
      dataDir: join(dir, 'data-stop'),
      listen: '127.0.0.1:0',
      env: { UI_API_SECRET: 'ui-api-secret-0123456789' },
    });
    const res = await fetch(`${other.url}/api/v1/events`, {
      headers: { authorization: `Bearer ${other.token}` },
    });
    const reader = res.body!.getReader();
    await reader.read();
    const t0 = Date.now();
    await other.stop(500);
    expect(Date.now() - t0).toBeLessThan(800);
    expect((await reader.read()).done).toBe(true);
  });

  it('pause and resume are events too', async () => {
    const res = await call('/api/v1/events');
    const got = readEvents(res, (es) => es.filter((e) => e.event === 'job').length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    await call('/api/v1/jobs/shop/a/pause', { method: 'POST', headers: bearer() });
    await call('/api/v1/jobs/shop/a/resume', { method: 'POST', headers: bearer() });
    const jobs = (await got).filter((e) => e.event === 'job').map((e) => JSON.parse(e.data));
    expect(jobs).toEqual([
      { app: 'shop', job: 'a', paused: true },
      { app: 'shop', job: 'a', paused: false },
    ]);
  });
});

describe('read views', () => {
  it('GET /api/v1/jobs reads the store once, whatever the number of jobs; pages with offset/limit', async () => {
    storeCalls.length = 0;
    const res = await (await call('/api/v1/jobs')).json();
    // the scheduler's own ledger writes (plan-ahead, checkpoints) may land meanwhile; the API
    // reads only (it has no path to the ledger's write). The bearer token's row is read again
    // when its cached copy has aged (TOKEN_CACHE_MS): that read is the request's, not the view's
    expect(storeCalls.filter((c) => c !== 'write' && c !== 'tokenByName')).toEqual([
      'recentOutcomes',
    ]);
    expect(res.total).toBe(3);
    expect(res.jobs.map((j: { job: string }) => j.job)).toEqual(['a', 'b', 'berlin']);
    expect(res.jobs[0].recent_outcomes.length).toBeGreaterThan(0);
    const page = await (await call('/api/v1/jobs?offset=1&limit=1')).json();
    expect(page).toMatchObject({ total: 3, jobs: [{ job: 'b' }] });
    expect((await call('/api/v1/jobs?limit=0')).status).toBe(400);
  });

  it('one job: policy, redacted request, signed', async () => {
    const j = await (await call('/api/v1/jobs/shop/berlin')).json();
    expect(j.request.headers).toEqual({ 'X-Api-Key': '(hidden)' });
    expect(j.signed).toBe(true);
    expect(j.policy.concurrency).toBe('Forbid');
    expect(JSON.stringify(j)).not.toContain('k-123-secret');
    expect((await call('/api/v1/jobs/shop/nope')).status).toBe(404);
  });

  it('next fires merge schedules, give local times and mark DST transitions', async () => {
    const n = await (await call('/api/v1/jobs/shop/berlin/next?count=40')).json();
    expect(n.fires).toHaveLength(40);
    expect(n.timezone).toBe('Europe/Berlin');
    const marked = n.fires.filter((f: { transition: unknown }) => f.transition);
    for (const f of marked) expect(f.transition.before).not.toBe(f.transition.after);
    for (const f of n.fires) expect(f.local).toMatch(/\+0[12]:00$/);
    expect((await call('/api/v1/jobs/shop/berlin/next?count=101')).status).toBe(400);
  });

  it('stats: counts by outcome per hour, completeness, attention; upcoming fires', async () => {
    const s = await (await call('/api/v1/stats?hours=3')).json();
    expect(s.hours).toHaveLength(3);
    expect(s.totals.success).toBeGreaterThan(0);
    const u = await (await call('/api/v1/upcoming?hours=1&limit=3')).json();
    expect(u.fires.length).toBeGreaterThan(0);
    // within the hour: shop/b (every 15 min), and shop/berlin only when its 12:00 Berlin fire
    // falls in this hour (the test may run at any time of day); never the yearly shop/a
    const hour = Date.now() + 3600_000;
    for (const f of u.fires as { job: string; utc: string }[]) {
      expect(['b', 'berlin']).toContain(f.job);
      expect(Date.parse(f.utc)).toBeLessThanOrEqual(hour + 1000);
    }
    expect(u.fires.some((f: { job: string }) => f.job === 'b')).toBe(true);
    expect((await call('/api/v1/stats?hours=0')).status).toBe(400);
  });

  it('a run’s request: headers sent, never the signature or a secret', async () => {
    const t = await (
      await call('/api/v1/jobs/shop/berlin/trigger', { method: 'POST', headers: bearer() })
    ).json();
    const r = await (await call(`/api/v1/runs/${t.run.id}/request`)).json();
    expect(r.headers['X-Cron-Run-Key']).toBe(t.run.run_key);
    expect(r.headers['X-Cron-Signature']).toBe('(hidden)');
    expect(r.headers['X-Api-Key']).toBe('(hidden)');
    expect(JSON.stringify(r)).not.toMatch(/v1=[0-9a-f]{64}|ui-api-secret|k-123-secret/);
  });
});

describe('OpenAPI', () => {
  it('documents every route the UI adds', async () => {
    const doc = await (await call('/openapi.json')).json();
    for (const path of [
      '/api/v1/jobs/{app}/{job}',
      '/api/v1/jobs/{app}/{job}/next',
      '/api/v1/stats',
      '/api/v1/upcoming',
      '/api/v1/runs/{id}/request',
      '/api/v1/events',
      '/api/v1/session',
    ])
      expect(Object.keys(doc.paths)).toContain(path);
    expect(Object.keys(doc.paths['/api/v1/session'])).toEqual(['get', 'post', 'delete']);
    expect(doc.components.schemas.Job.properties.recent_outcomes).toBeDefined();
  });
});

describe('static UI', () => {
  it('serves index.html on every page path with a strict CSP, and hashed assets for a year', async () => {
    for (const path of ['/', '/jobs', '/jobs/shop/a', '/runs/x', '/login']) {
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const html = await res.text();
      expect(html).not.toMatch(/https?:\/\//);
      const asset = /src="(\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
      expect(asset).toBeDefined();
      const js = await call(asset!);
      expect(js.headers.get('cache-control')).toContain('immutable');
      expect(js.headers.get('content-type')).toContain('javascript');
    }
    const missing = await call('/assets/nope.js');
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('not_found');
  });
});
