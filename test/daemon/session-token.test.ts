/**
 * A web UI session is bound to the token it was opened with, not to that token's name (SPEC §18
 * "revoke: effective at once, also across restarts"), on a real daemon (in-process, real HTTP
 * server, real SQLite ledger): once token `x` is revoked, a new token named `x` — whatever its
 * role — does not bring the old sessions of `x` back, neither for requests nor for the session
 * state nor after a restart; the new token's own sessions work. Sessions made before sessions were
 * bound (no binding in the cookie) hold for the token file's token only, whose name cannot be
 * taken over.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { SESSION_COOKIE, Sessions } from '../../src/http/session.js';

let dir: string;
let daemon: DaemonHandle;

const start = (): Promise<DaemonHandle> =>
  startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: {},
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cronix-session-token-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [{ name: 'a', schedule: '0 0 1 1 *', command: { argv: ['/bin/true'] } }],
    }),
  );
  daemon = await start();
});
afterAll(async () => {
  await daemon.stop(1000);
});

async function asAdmin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${daemon.token as string}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function createToken(name: string, role: string): Promise<string> {
  const r = await asAdmin('POST', '/api/v1/tokens', { name, role });
  expect(r.status).toBe(201);
  return ((await r.json()) as { token: string }).token;
}

/** Logs in with `token`: the session cookie (`name=value`) and its CSRF token. */
async function login(token: string): Promise<{ cookie: string; csrf: string }> {
  const r = await fetch(`${daemon.url}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  expect(r.status).toBe(200);
  const csrf = ((await r.json()) as { csrf_token: string }).csrf_token;
  return { cookie: (r.headers.get('set-cookie') ?? '').split(';')[0] as string, csrf };
}

const withCookie = (
  s: { cookie: string; csrf?: string },
  method: string,
  path: string,
): Promise<Response> =>
  fetch(`${daemon.url}${path}`, {
    method,
    headers: { cookie: s.cookie, ...(s.csrf !== undefined ? { 'x-csrf-token': s.csrf } : {}) },
  });

async function sessionState(cookie: string): Promise<Record<string, unknown>> {
  const r = await fetch(`${daemon.url}/api/v1/session`, { headers: { cookie } });
  return (await r.json()) as Record<string, unknown>;
}

describe('a session of a revoked token', () => {
  it('stays dead when a new token takes the name, whatever its role; the new token logs in', async () => {
    const first = await createToken('x', 'viewer');
    const old = await login(first);
    expect((await withCookie(old, 'GET', '/api/v1/jobs')).status).toBe(200);

    expect((await asAdmin('DELETE', '/api/v1/tokens/x')).status).toBe(200);
    expect((await withCookie(old, 'GET', '/api/v1/jobs')).status).toBe(401);

    // a new token named x, with more power than the first
    const second = await createToken('x', 'admin');
    const jobs = await withCookie(old, 'GET', '/api/v1/jobs');
    expect(jobs.status).toBe(401);
    expect(((await jobs.json()) as { error: { message: string } }).error.message).toBe(
      'the token this session was opened with has been revoked or has expired',
    );
    expect((await withCookie(old, 'GET', '/api/v1/tokens')).status).toBe(401);
    expect((await withCookie(old, 'POST', '/api/v1/jobs/shop/a/pause')).status).toBe(401);
    expect((await withCookie(old, 'GET', '/api/v1/events')).status).toBe(401);
    expect(await sessionState(old.cookie)).toMatchObject({
      authenticated: false,
      who: null,
      role: null,
    });

    // the new token's own session acts with its role
    const fresh = await login(second);
    expect((await withCookie(fresh, 'GET', '/api/v1/tokens')).status).toBe(200);
    expect(await sessionState(fresh.cookie)).toMatchObject({
      authenticated: true,
      who: 'x',
      role: 'admin',
    });

    // the binding is in the cookie, signed: after a restart the old session is still dead
    await daemon.stop(1000);
    daemon = await start();
    expect((await withCookie(old, 'GET', '/api/v1/jobs')).status).toBe(401);
    expect((await withCookie(fresh, 'GET', '/api/v1/tokens')).status).toBe(200);
  });

  it('a cookie that names a token without its binding holds only for the token file’s', async () => {
    await createToken('y', 'operator');
    // cookies as a daemon of before the binding signed them (the key is the token file's)
    const sessions = new Sessions(daemon.token as string);
    const unbound = sessions.create({ kind: 'token', name: 'y', binding: null });
    const forged = sessions.create({ kind: 'token', name: 'y', binding: 'not-its-binding' });
    const file = sessions.create();
    const cookie = (value: string) => ({ cookie: `${SESSION_COOKIE}=${value}` });
    expect((await withCookie(cookie(unbound.cookie), 'GET', '/api/v1/jobs')).status).toBe(401);
    expect((await withCookie(cookie(forged.cookie), 'GET', '/api/v1/jobs')).status).toBe(401);
    expect((await withCookie(cookie(file.cookie), 'GET', '/api/v1/jobs')).status).toBe(200);
    expect(await sessionState(`${SESSION_COOKIE}=${file.cookie}`)).toMatchObject({
      authenticated: true,
      who: 'default',
      role: 'admin',
    });
  });
});
