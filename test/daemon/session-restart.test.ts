/**
 * A logged-out session stays logged out across a restart (finding 9): sessions are stateless
 * HMACs, and the logout used to be remembered in memory only, so the same cookie worked again
 * after `cronix serve` restarted. Real processes, one data dir.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { manifestDir, spawnServe, type Served } from '../helpers/serve.js';
import { freePort, startSink } from '../helpers/sink.js';

async function login(s: Served): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${s.url}/api/v1/session`, {
    method: 'POST',
    body: JSON.stringify({ token: s.token }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrf_token: string };
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: body.csrf_token };
}

async function authenticated(s: Served, cookie: string): Promise<boolean> {
  const res = await fetch(`${s.url}/api/v1/session`, { headers: { cookie } });
  return ((await res.json()) as { authenticated: boolean }).authenticated;
}

async function stop(s: Served): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exited;
}

it('a cookie ended by Log out is refused after a restart; a live session survives it', async () => {
  const sink = await startSink();
  const dir = manifestDir('sess', [
    { name: 'a', schedule: '0 0 1 1 *', request: { url: `${sink.url}/a` } },
  ]);
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const first = await spawnServe(dir, port, { dataDir });
  const out = await login(first);
  const kept = await login(first);
  const logout = await fetch(`${first.url}/api/v1/session`, {
    method: 'DELETE',
    headers: { cookie: out.cookie },
  });
  expect(logout.status).toBe(200);
  expect(await authenticated(first, out.cookie)).toBe(false);
  await stop(first);

  const revocations = join(dataDir, 'sessions-revoked.json');
  expect(statSync(revocations).mode & 0o777).toBe(0o600);
  expect(readFileSync(revocations, 'utf8')).not.toContain(first.token);

  const second = await spawnServe(dir, port, { dataDir });
  try {
    expect(await authenticated(second, out.cookie)).toBe(false);
    const read = await fetch(`${second.url}/api/v1/jobs`, { headers: { cookie: out.cookie } });
    expect(read.status).toBe(401);
    const pause = await fetch(`${second.url}/api/v1/jobs/sess/a/pause`, {
      method: 'POST',
      headers: { cookie: out.cookie, 'x-csrf-token': out.csrf },
    });
    expect(pause.status).toBe(401);
    // the session that did not log out still works
    expect(await authenticated(second, kept.cookie)).toBe(true);
    const ok = await fetch(`${second.url}/api/v1/jobs`, { headers: { cookie: kept.cookie } });
    expect(ok.status).toBe(200);
  } finally {
    await stop(second);
    await sink.close();
  }
}, 30_000);
