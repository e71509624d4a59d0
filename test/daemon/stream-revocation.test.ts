/**
 * Open streams end with their credential (SPEC §18), on a real `cronix serve` process with tokens
 * made and revoked by the real `cronix tokens` CLI: an event stream (`GET /api/v1/events`) opened
 * with a named token, or with a web UI session made with one, ends within seconds of
 * `cronix tokens revoke`, and opening it again is 401; a stream whose token expires ends by
 * itself (the periodic re-check, as for a token revoked on another replica); a `cronix logs -f`
 * of a running command ends with a line saying why, and the run goes on.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_RECHECK_MS } from '../../src/http/stream-guard.js';
import { CLI, cronixAsync } from '../helpers/cli.js';
import { until } from '../helpers/common.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';

/** How long a stream may outlive its credential here: the re-check, the token cache, slack. */
const ENDS_WITHIN_MS = 10_000;

let served: Served;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-stream-revoke-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [
        {
          // prints a line every 0.2 s for about 50 s: long enough to follow and revoke
          name: 'ticker',
          schedule: '0 0 1 1 *',
          command: {
            argv: [
              'sh',
              '-c',
              'i=0; while [ $i -lt 250 ]; do echo tick $i; i=$((i+1)); sleep 0.2; done',
            ],
          },
        },
      ],
    }),
  );
  served = await spawnServe(dir);
}, 30_000);
afterAll(async () => {
  served?.child.kill('SIGTERM'); // the daemon stops the command it runs before it exits
  await served?.exited;
});

/** `cronix <args>` against the daemon as the admin (the token file's token). */
async function cli(
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return cronixAsync([...args, '--url', served.url], {
    env: { PATH: process.env['PATH'] ?? '', CRONIX_TOKEN: served.token },
  });
}

/** A new named token, made by `cronix tokens create`. */
async function createToken(name: string, role: string, extra: string[] = []): Promise<string> {
  const r = await cli(['tokens', 'create', name, '--role', role, ...extra, '-o', 'json']);
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { token: string }).token;
}

async function revoke(name: string): Promise<void> {
  const r = await cli(['tokens', 'revoke', name]);
  expect(r.status, r.stderr).toBe(0);
}

const events = (headers: Record<string, string>): Promise<Response> =>
  fetch(`${served.url}/api/v1/events`, { headers });

/** One open response, read as it comes. */
interface Open {
  /** Everything read so far. */
  text(): string;
  /** Resolves once `pred(text)` holds; rejects after `ms`. */
  until(pred: (text: string) => boolean, ms?: number): Promise<void>;
  /** Resolves once the response has ended, with when (`Date.now()`); rejects after `ms`. */
  ended(ms: number): Promise<number>;
}

function reading(res: Response): Open {
  let text = '';
  let endedAt: number | null = null;
  const decoder = new TextDecoder();
  void (async () => {
    const reader = res.body!.getReader();
    for (;;) {
      const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    endedAt = Date.now();
  })();
  return {
    text: () => text,
    until: async (pred, ms = 10_000) => {
      await until(() => (pred(text) ? true : undefined), ms, 'the stream to say so');
    },
    ended: (ms) => until(() => endedAt ?? undefined, ms, 'the stream to end'),
  };
}

describe('an event stream', () => {
  it('opened with a named token ends once `cronix tokens revoke` revokes it; reopening is 401', async () => {
    const token = await createToken('sse-viewer', 'viewer');
    const res = await events({ authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    const stream = reading(res);
    await stream.until((t) => t.includes('event: ready'));
    await revoke('sse-viewer');
    const revokedAt = Date.now();
    expect((await stream.ended(20_000)) - revokedAt).toBeLessThan(ENDS_WITHIN_MS);
    const again = await events({ authorization: `Bearer ${token}` });
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  it('opened with a web UI session ends once the session’s token is revoked; reopening is 401', async () => {
    const token = await createToken('ui-operator', 'operator', ['--app', 'shop']);
    const login = await fetch(`${served.url}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^cronix_session=/);
    const res = await events({ cookie });
    expect(res.status).toBe(200);
    const stream = reading(res);
    await stream.until((t) => t.includes('event: ready'));
    await revoke('ui-operator');
    const revokedAt = Date.now();
    expect((await stream.ended(20_000)) - revokedAt).toBeLessThan(ENDS_WITHIN_MS);
    expect((await events({ cookie })).status).toBe(401);
  });

  it('opened with a token that expires ends by itself once it has expired', async () => {
    const expiresAt = Date.now() + 3_000;
    const token = await createToken('sse-short', 'viewer', [
      '--expires',
      new Date(expiresAt).toISOString(),
    ]);
    const res = await events({ authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    const stream = reading(res);
    await stream.until((t) => t.includes('event: ready'));
    // nothing revokes it: only the periodic re-check can end it
    const after = (await stream.ended(20_000)) - expiresAt;
    expect(after).toBeGreaterThanOrEqual(0);
    expect(after).toBeLessThan(STREAM_RECHECK_MS + 5_000);
    expect((await events({ authorization: `Bearer ${token}` })).status).toBe(401);
  });
});

describe('cronix logs -f', () => {
  it('ends with a line saying why once its token is revoked; the run goes on', async () => {
    const token = await createToken('log-reader', 'operator', ['--app', 'shop']);
    const t = await api(served, 'POST', '/api/v1/jobs/shop/ticker/trigger');
    expect(t.status).toBe(202);
    const runId = (t.json['run'] as { id: string }).id;
    const child = spawn(process.execPath, [CLI, 'logs', runId, '-f', '--url', served.url], {
      env: { PATH: process.env['PATH'] ?? '', CRONIX_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    try {
      await until(() => (stdout.includes('tick 2') ? true : undefined), 20_000, 'followed output');
      await revoke('log-reader');
      const revokedAt = Date.now();
      const code = await Promise.race([
        exited,
        new Promise<'open'>((r) => setTimeout(() => r('open'), 30_000)),
      ]);
      expect(code, stderr).toBe(0);
      expect(Date.now() - revokedAt).toBeLessThan(ENDS_WITHIN_MS);
      expect(stdout).toContain(
        '--- cronix: the token or session of this request was revoked or has expired; the output is not followed further ---',
      );
      const run = await api(served, 'GET', `/api/v1/runs/${runId}`);
      expect(run.json['phase']).toBe('running');
    } finally {
      child.kill('SIGKILL');
      await api(served, 'POST', `/api/v1/runs/${runId}/cancel`);
    }
  }, 60_000);
});
