/**
 * Who may read what, and under which Host (finding 6, SPEC §7, §9 item 9), on real daemons
 * (in-process, real HTTP servers, real sockets): every `/api/v1` read needs the token or a
 * session; `/healthz` and `/openapi.json` stay open, `/metrics` too unless `--metrics-auth`;
 * a request naming another Host is refused with 421 whatever its credentials (DNS rebinding).
 */
import { request } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let dir: string;
let daemon: DaemonHandle;
let runId: string;
let commandRunId: string;

function manifest(): string {
  const file = join(dir, 'manifest.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [
        {
          name: 'a',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/a?key=k-123`, headers: { 'X-Upstream-Key': 'up-123' } },
          auth: { secret_refs: ['env:ACCESS_SECRET'] },
        },
        {
          name: 'cmd',
          schedule: '0 0 1 1 *',
          command: { argv: ['/bin/echo', 'command output'] },
        },
      ],
    }),
  );
  return file;
}

const env = { ACCESS_SECRET: 'access-secret-0123456789', PATH: process.env['PATH'] ?? '' };

beforeAll(async () => {
  sink = await startSink();
  dir = mkdtempSync(join(tmpdir(), 'cronix-access-'));
  daemon = await startDaemon({
    manifests: [manifest()],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env,
    allowedHosts: ['cron.internal', 'pinned.internal:8443'],
    publicUrl: 'https://cron.example.com/ui',
  });
  const auth = { authorization: `Bearer ${daemon.token}` };
  const trigger = async (job: string): Promise<string> => {
    const r = await fetch(`${daemon.url}/api/v1/jobs/shop/${job}/trigger`, {
      method: 'POST',
      headers: auth,
    });
    return ((await r.json()) as { run: { id: string } }).run.id;
  };
  runId = await trigger('a');
  commandRunId = await trigger('cmd');
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

/** A request with a chosen Host header (fetch does not let one set it), answered in full. */
function raw(
  url: string,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: Number(u.port), path, method, headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const reads = (): string[] => [
  `/api/v1/runs/${commandRunId}/log`,
  '/api/v1/events',
  '/api/v1/notifications',
  '/api/v1/jobs/shop/a',
  `/api/v1/runs/${runId}/request`,
  '/api/v1/jobs',
  '/api/v1/runs',
  `/api/v1/runs/${runId}`,
  '/api/v1/jobs/shop/a/next',
  '/api/v1/stats',
  '/api/v1/upcoming',
];

describe('reads need the token or a session', () => {
  it('every /api/v1 read without credentials is 401 in the §7 shape, and leaks nothing', async () => {
    for (const path of reads()) {
      const res = await fetch(`${daemon.url}${path}`);
      const text = await res.text();
      expect(res.status, path).toBe(401);
      expect(JSON.parse(text), path).toEqual({
        error: { code: 'unauthorized', message: expect.stringContaining('Bearer') as unknown },
      });
      for (const secret of ['k-123', 'up-123', 'command output', sink.url])
        expect(text, path).not.toContain(secret);
    }
  });

  it('with the bearer token or a session cookie (no CSRF token for a read) they answer', async () => {
    const login = await fetch(`${daemon.url}/api/v1/session`, {
      method: 'POST',
      body: JSON.stringify({ token: daemon.token }),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    for (const path of reads()) {
      for (const headers of [{ authorization: `Bearer ${daemon.token}` }, { cookie }] as Record<
        string,
        string
      >[]) {
        const res = await fetch(`${daemon.url}${path}`, { headers });
        expect(res.status, `${path} ${Object.keys(headers)[0]}`).toBe(200);
        await res.body?.cancel();
      }
    }
  });

  it('/healthz, /openapi.json and /metrics stay open; the session state too', async () => {
    for (const path of ['/healthz', '/openapi.json', '/metrics', '/api/v1/session']) {
      const res = await fetch(`${daemon.url}${path}`);
      expect(res.status, path).toBe(200);
      const text = await res.text();
      for (const secret of ['k-123', 'up-123', sink.url]) expect(text, path).not.toContain(secret);
    }
  });

  it('--metrics-auth: /metrics needs the token', async () => {
    const other = await startDaemon({
      manifests: [manifest()],
      dataDir: join(dir, 'data-metrics'),
      listen: '127.0.0.1:0',
      env,
      metricsAuth: true,
    });
    try {
      const open = await fetch(`${other.url}/metrics`);
      expect(open.status).toBe(401);
      expect(((await open.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      const ok = await fetch(`${other.url}/metrics`, {
        headers: { authorization: `Bearer ${other.token}` },
      });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('cronix_event_streams 0');
      expect((await fetch(`${other.url}/healthz`)).status).toBe(200);
    } finally {
      await other.stop(1000);
    }
  });
});

describe('Host', () => {
  const port = (): string => new URL(daemon.url).port;

  it('another name is refused with 421, whatever the route and the credentials', async () => {
    for (const host of [
      'attacker.example',
      `attacker.example:${port()}`,
      'localhost.attacker.example',
      '10.9.8.7',
    ]) {
      for (const path of ['/healthz', '/metrics', '/', '/api/v1/jobs', '/api/v1/session']) {
        const res = await raw(daemon.url, path, {
          host,
          authorization: `Bearer ${daemon.token}`,
        });
        expect(res.status, `${host} ${path}`).toBe(421);
        const body = JSON.parse(res.body) as { error: { code: string; message: string } };
        expect(body.error.code).toBe('misdirected_request');
        expect(body.error.message).toContain('--allowed-host');
      }
    }
    const post = await raw(
      daemon.url,
      '/api/v1/jobs/shop/a/pause',
      {
        host: 'attacker.example',
        authorization: `Bearer ${daemon.token}`,
      },
      'POST',
    );
    expect(post.status).toBe(421);
  });

  it('loopback names, --allowed-host (with its port when given) and --public-url are served', async () => {
    const ok = [
      `127.0.0.1:${port()}`,
      `localhost:${port()}`,
      'localhost',
      `[::1]:${port()}`,
      'cron.internal',
      `CRON.INTERNAL:${port()}`,
      'pinned.internal:8443',
      'cron.example.com',
    ];
    for (const host of ok) {
      const res = await raw(daemon.url, '/healthz', { host });
      expect(res.status, host).toBe(200);
    }
    expect((await raw(daemon.url, '/healthz', { host: 'pinned.internal:9000' })).status).toBe(421);
  });

  it('--no-auth: reads are open, the Host check stays', async () => {
    const open = await startDaemon({
      manifests: [manifest()],
      dataDir: join(dir, 'data-noauth'),
      listen: '127.0.0.1:0',
      env,
      noAuth: true,
    });
    try {
      expect((await fetch(`${open.url}/api/v1/jobs`)).status).toBe(200);
      expect((await raw(open.url, '/api/v1/jobs', { host: 'attacker.example' })).status).toBe(421);
    } finally {
      await open.stop(1000);
    }
  });
});
