/**
 * The SDK's framework adapters with the real frameworks — Express, Fastify, Hono, and a
 * Fetch-style route handler as Next.js calls it (`withCronix`) — against trigger requests
 * signed by the real `cronix trigger` shim and the real `cronix serve` daemon (built binary),
 * plus forged and tampered requests. Each route echoes what the adapter handed it: the body as
 * the framework parsed it and the verified run key.
 */
import { serve as honoServe } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/contract/signature.js';
import {
  cronixExpress,
  cronixFastify,
  cronixHono,
  keepRawBody,
  withCronix,
  type CronixContext,
  type ExpressLikeRequest,
} from '../../src/sdk/index.js';
import { until } from '../helpers/common.js';
import { api, manifestDir, spawnServe, TEST_SECRET as SERVE_SECRET } from '../helpers/serve.js';
import {
  dirArgs,
  normalizedJob,
  runShim,
  shimDirs,
  TEST_SECRET as SHIM_SECRET,
  writeSpec,
} from '../helpers/shim.js';

const SECRETS = [SHIM_SECRET, SERVE_SECRET];
const BODY = '{"invoice": 42, "note": "a  b\\u00e9"}';
const PARSED = { invoice: 42, note: 'a  bé' };

/** What each route saw, by route path. */
const seen: { route: string; runKey: string | null; body: unknown }[] = [];
const record = (route: string, cronix: CronixContext | undefined, body: unknown): void => {
  seen.push({ route, runKey: cronix?.trigger.runKey ?? null, body });
};

const servers: { close(): unknown }[] = [];
let base = '';
const ports: Record<string, number> = {};

async function listen(server: Server): Promise<number> {
  if (!server.listening) await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  // Express: cronix first; after express.json with keepRawBody; after express.json without it
  const ex = express();
  ex.post('/first', cronixExpress({ secrets: SECRETS }), (req, res) => {
    record('express/first', (req as ExpressLikeRequest).cronix, req.body);
    res.json({ ok: true });
  });
  ex.post(
    '/kept',
    express.json({ verify: keepRawBody }),
    cronixExpress({ secrets: SECRETS }),
    (req, res) => {
      record('express/kept', (req as ExpressLikeRequest).cronix, req.body);
      res.json({ ok: true });
    },
  );
  ex.post('/lost', express.json(), cronixExpress({ secrets: SECRETS }), (_req, res) => {
    res.json({ ok: true });
  });
  const exServer = ex.listen(0, '127.0.0.1');
  servers.push(exServer);
  ports['express'] = await listen(exServer);

  // Fastify: its own JSON parser; and an app whose JSON parser was registered before cronix
  const fa = Fastify();
  await fa.register(async (jobs) => {
    await jobs.register(cronixFastify, { secrets: SECRETS });
    jobs.post('/job', async (request) => {
      record('fastify/job', (request as unknown as { cronix: CronixContext }).cronix, request.body);
      return { ok: true };
    });
  });
  await fa.register(async (custom) => {
    custom.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
      done(null, { custom: JSON.parse(text as string) as unknown });
    });
    await custom.register(cronixFastify, { secrets: SECRETS });
    custom.post('/custom', async (request) => {
      record(
        'fastify/custom',
        (request as unknown as { cronix: CronixContext }).cronix,
        request.body,
      );
      return { ok: true };
    });
  });
  fa.get('/open', async () => ({ open: true }));
  await fa.listen({ port: 0, host: '127.0.0.1' });
  servers.push(fa);
  ports['fastify'] = (fa.server.address() as AddressInfo).port;

  // Hono on @hono/node-server
  const ho = new Hono<{ Variables: { cronix: CronixContext } }>();
  ho.post('/job', cronixHono({ secrets: SECRETS }), async (c) => {
    record('hono/job', c.get('cronix'), await c.req.json());
    return c.json({ ok: true });
  });
  const hoServer = honoServe({ fetch: ho.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  servers.push(hoServer);
  ports['hono'] = await listen(hoServer);

  // a Next.js App Router route handler: (request, { params }) => Response
  const POST = withCronix(
    { secrets: SECRETS },
    async (request: Request, ctx: { params: Promise<{ job: string }> }, cronix) => {
      record(`next/${(await ctx.params).job}`, cronix, await request.json());
      return Response.json({ ok: true });
    },
  );
  const nextServer = honoServe({
    fetch: (request: Request) =>
      POST(request, { params: Promise.resolve({ job: new URL(request.url).pathname.slice(1) }) }),
    port: 0,
    hostname: '127.0.0.1',
  }) as Server;
  servers.push(nextServer);
  ports['next'] = await listen(nextServer);
  base = '127.0.0.1';
}, 30_000);

afterAll(async () => {
  for (const s of servers) await s.close();
});

/** The routes that verify, as `<framework>/<path>`, and their URL. */
const ROUTES = [
  'express/first',
  'express/kept',
  'fastify/job',
  'fastify/custom',
  'hono/job',
  'next/job',
];
const urlOf = (route: string): string => {
  const [fw, path] = route.split('/') as [string, string];
  return `http://${base}:${ports[fw]}/${path}`;
};
const expectedBody = (route: string): unknown =>
  route === 'fastify/custom' ? { custom: PARSED } : PARSED;
const jobOf = (route: string): string => route.replace('/', '-');

function job(route: string): Record<string, unknown> {
  return {
    name: jobOf(route),
    schedule: '0 0 1 1 *',
    request: {
      url: `${urlOf(route)}?from=cronix&x=%20y`,
      headers: { 'content-type': 'application/json' },
      body: BODY,
    },
    policy: { retries: { max_attempts: 1 } },
  };
}

describe('signed by the shim (cronix trigger)', () => {
  it('every adapter verifies the request and hands the parsed body on', async () => {
    const dirs = shimDirs();
    for (const route of ROUTES) writeSpec(dirs.specDir, 'sdk', normalizedJob('sdk', job(route)));
    for (const route of ROUTES) {
      const before = seen.length;
      const run = await runShim(`sdk.${jobOf(route)}`, dirArgs(dirs));
      expect(run.code, `${route}: ${run.stdout}`).toBe(0);
      const runKey = run.lines.find((l) => l['event'] === 'fire-start')?.['run_key'];
      expect(seen.slice(before)).toEqual([{ route, runKey, body: expectedBody(route) }]);
    }
  }, 60_000);

  it('a wrong secret is refused with 401 by every adapter, the handler never called', async () => {
    const dirs = shimDirs();
    for (const route of ROUTES) writeSpec(dirs.specDir, 'sdk', normalizedJob('sdk', job(route)));
    const before = seen.length;
    for (const route of ROUTES) {
      const run = await runShim(`sdk.${jobOf(route)}`, dirArgs(dirs), {
        CRON_SECRET: 'another-secret-0123456789',
      });
      expect(run.code, route).toBe(1); // 4xx: app rejected
      const attempt = run.lines.find((l) => l['status'] !== undefined);
      expect(attempt?.['status'], route).toBe(401);
    }
    expect(seen.length).toBe(before);
  }, 60_000);
});

describe('signed by the daemon (cronix serve)', () => {
  it('every adapter verifies the daemon’s request', async () => {
    const dir = manifestDir('sdk', ROUTES.map(job));
    const daemon = await spawnServe(dir);
    try {
      for (const route of ROUTES) {
        const before = seen.length;
        const t = await api(daemon, 'POST', `/api/v1/jobs/sdk/${jobOf(route)}/trigger`);
        expect(t.status, JSON.stringify(t.json)).toBeLessThan(300);
        const id = (t.json['run'] as Record<string, unknown>)['id'] as string;
        const run = await until(
          async () => {
            const r = (await api(daemon, 'GET', `/api/v1/runs/${id}`)).json;
            return r['phase'] === 'ended' ? r : undefined;
          },
          20_000,
          `run of ${route}`,
        );
        expect(run['outcome'], route).toBe('success');
        expect(seen.slice(before)).toEqual([
          { route, runKey: run['run_key'] ?? run['runKey'], body: expectedBody(route) },
        ]);
      }
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  }, 90_000);
});

describe('by hand', () => {
  const t = (): number => Math.floor(Date.now() / 1000);
  const signed = (route: string, body: string, secret = SHIM_SECRET) => {
    const url = new URL(urlOf(route));
    return {
      'content-type': 'application/json',
      'x-cron-signature': sign({
        secret,
        method: 'POST',
        path: url.pathname,
        body,
        timestamp: t(),
      }),
      'x-cron-run-key': 'sdk/x#2026-01-01T00:00:00Z#ab',
    };
  };

  it('a tampered body is refused by every adapter with the SignatureMismatch JSON', async () => {
    for (const route of ROUTES) {
      const res = await fetch(urlOf(route), {
        method: 'POST',
        headers: signed(route, BODY),
        body: BODY.replace('42', '43'),
      });
      expect(res.status, route).toBe(401);
      expect(await res.json(), route).toMatchObject({ error: { code: 'SignatureMismatch' } });
    }
  });

  it('Express: a JSON parser mounted before without keepRawBody is an error that says why', async () => {
    const res = await fetch(urlOf('express/lost'), {
      method: 'POST',
      headers: signed('express/lost', BODY),
      body: BODY,
    });
    expect(res.status).toBe(500);
  });

  it('Fastify: routes outside the registered context stay open', async () => {
    const res = await fetch(`http://${base}:${ports['fastify']}/open`);
    expect(await res.json()).toEqual({ open: true });
  });

  it('a body over maxBodyBytes is answered 413', async () => {
    const small = express();
    small.post('/j', cronixExpress({ secrets: SECRETS, maxBodyBytes: 10 }), (_q, r) => r.json({}));
    const s = small.listen(0, '127.0.0.1');
    const port = await listen(s);
    const res = await fetch(`http://127.0.0.1:${port}/j`, { method: 'POST', body: BODY });
    s.close();
    expect(res.status).toBe(413);
  });
});
