/**
 * Explained runs (SPEC §9 item 7) and hostile input (item 9) on a real daemon
 * in this process with a real HTTP server and ledger: every run says why it
 * ended (`error`) and what each attempt did (`attempt_log`), in the API and in
 * `cronix runs <id>`; no request body, header or query makes the API answer
 * 5xx, and errors keep the JSON shape.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { cronixAsync as cronix } from '../helpers/cli.js';
import { until } from '../helpers/serve.js';
import { freePort, sequence, startSink, type Sink } from '../helpers/sink.js';

const SECRET = 'explained-secret-0123456789';
/** Percent-encodes, or gives malformed UTF-8 for text that cannot be encoded (lone surrogates). */
const enc = (t: string): string => {
  try {
    return encodeURIComponent(t);
  } catch {
    return '%ED%A0%80%FF';
  }
};
let sink: Sink;
let daemon: DaemonHandle;
let closedPort: number;

beforeAll(async () => {
  sink = await startSink();
  closedPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cronix-explained-'));
  const retries = { max_attempts: 3, min_seconds: 0, max_seconds: 1 };
  const jobs = [
    { name: 'flaky', url: `${sink.url}/flaky`, policy: { retries } },
    {
      name: 'gone',
      url: `http://127.0.0.1:${closedPort}/x`,
      policy: { retries: { ...retries, max_attempts: 2 } },
    },
    {
      name: 'slow',
      url: `${sink.url}/slow`,
      policy: { timeout_seconds: 1, retries: { max_attempts: 1 } },
    },
    {
      name: 'hang',
      url: `${sink.url}/hang`,
      policy: { timeout_seconds: 60, retries: { max_attempts: 1 } },
    },
  ];
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'why',
      jobs: jobs.map((j) => ({
        name: j.name,
        schedule: '0 0 1 1 *',
        request: { url: j.url },
        policy: j.policy,
        auth: { secret_refs: ['env:WHY_SECRET'] },
      })),
    }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { WHY_SECRET: SECRET },
  });
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

async function call(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${daemon.token}`,
      'content-type': 'application/json',
      ...headers,
    },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> | null = null;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Node's HTTP parser answers a 431 with no body to a head over 16 KiB, before the API sees it
    if (res.status !== 431)
      throw new Error(`${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.status, text, json: json ?? {} };
}

async function endedRun(job: string): Promise<Record<string, unknown>> {
  const t = await call('POST', `/api/v1/jobs/why/${job}/trigger`, '{}');
  expect(t.status).toBe(202);
  const id = (t.json['run'] as { id: string }).id;
  return until(async () => {
    const r = (await call('GET', `/api/v1/runs/${id}`)).json;
    return r['phase'] === 'ended' ? r : undefined;
  });
}

describe('explained runs', () => {
  it('503, 503, 503: retries_exhausted with "HTTP 503" and three attempts', async () => {
    sink.setScript(sequence([503]));
    const run = await endedRun('flaky');
    expect(run).toMatchObject({ outcome: 'retries_exhausted', error: 'HTTP 503', attempts: 3 });
    const log = run['attempt_log'] as Record<string, unknown>[];
    expect(log.map((a) => [a['attempt'], a['status'], a['error']])).toEqual([
      [1, 503, 'HTTP 503'],
      [2, 503, 'HTTP 503'],
      [3, 503, 'HTTP 503'],
    ]);
    for (const a of log) {
      expect(typeof a['duration_ms']).toBe('number');
      expect(Date.parse(a['started_at'] as string)).toBeGreaterThan(0);
    }
    expect(typeof run['duration_ms']).toBe('number');
  });

  it('503 then 200: success with no error; the failed attempt keeps its own', async () => {
    sink.setScript(sequence([503, 200]));
    const run = await endedRun('flaky');
    expect(run).toMatchObject({ outcome: 'success', error: null, attempts: 2 });
    expect((run['attempt_log'] as Record<string, unknown>[]).map((a) => a['error'])).toEqual([
      'HTTP 503',
      null,
    ]);
  });

  it('a refused connection and a timeout are named', async () => {
    const gone = await endedRun('gone');
    expect(gone['outcome']).toBe('retries_exhausted');
    expect(gone['error']).toMatch(new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${closedPort}`));
    sink.setScript(() => ({ hang: true }));
    const slow = await endedRun('slow');
    expect(slow).toMatchObject({ outcome: 'retries_exhausted', error: 'timeout after 1s' });
  });

  it('a cancelled run says so; cronix runs <id> shows the run and its attempts', async () => {
    sink.setScript(() => ({ hang: true }));
    const t = await call('POST', '/api/v1/jobs/why/hang/trigger', '{}');
    const id = (t.json['run'] as { id: string }).id;
    await until(() =>
      sink.requests.some((r) => r.headers['x-cron-run-id'] === id) ? true : undefined,
    );
    const c = await call('POST', `/api/v1/runs/${id}/cancel`);
    expect(c.json['run']).toMatchObject({ phase: 'ended', outcome: 'stopped', error: 'cancelled' });
    const env = { ...process.env, CRONIX_URL: daemon.url, CRONIX_TOKEN: daemon.token ?? '' };
    const one = await cronix(['runs', id], { env });
    expect(one.status).toBe(0);
    expect(one.stdout).toMatch(/^outcome\s+stopped$/m);
    expect(one.stdout).toMatch(/^error\s+cancelled$/m);
    expect(one.stdout).toMatch(/ATTEMPT\s+STARTED_AT\s+DURATION\s+STATUS\s+ERROR/);
    expect(one.stdout).toMatch(/^1\s+\S+Z\s+\S+\s+-\s+stopped\s+-$/m);
    const list = await cronix(['runs', '--job', 'why.flaky'], { env });
    expect(list.stdout.split('\n')[0]).toMatch(/DURATION/);
    expect(list.stdout).toContain('HTTP 503');
    const json = await cronix(['runs', id, '-o', 'json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ id, error: 'cancelled' });
    const missing = await cronix(['runs', 'no-such-run'], { env });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('404');
  });

  it('no response of the API carries the signing secret', async () => {
    const runs = await call('GET', '/api/v1/runs?limit=1000');
    expect(runs.text).not.toContain(SECRET);
    expect((await call('GET', '/api/v1/jobs')).text).not.toContain(SECRET);
  });
});

describe('hostile input (SPEC §9 item 9)', () => {
  const text = fc.oneof(
    fc.string({ maxLength: 50 }),
    fc.string({ unit: 'binary', maxLength: 50 }),
    fc.constantFrom('\u0000', '\ud800', '💥'.repeat(300), 'x'.repeat(70_000), '%', '%ZZ', '../..'),
  );
  const deep = fc.integer({ min: 1, max: 20_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`);
  const body = fc.oneof(
    text,
    deep.map((d) => `{"at": ${d}}`),
    deep.map((d) => `{"after_seconds": ${d}}`),
    fc.json(),
    fc.constantFrom(
      '{"at": "9999-99-99T99:99:99Z"}',
      '{"after_seconds": 1e309}',
      '{"after_seconds": -0}',
      '{"after_seconds": 123456789012345678901234567890}',
      '{"at": "2026-01-01T00:00:00+99:99"}',
      '{"__proto__": {"x": 1}}',
      `{"${'k'.repeat(10_000)}": 1}`,
    ),
  );
  const path = fc.oneof(
    fc.constantFrom(
      '/api/v1/jobs/why/flaky/trigger',
      '/api/v1/runs/x/cancel',
      '/api/v1/runs/x/replay',
    ),
    text.map((t) => `/api/v1/jobs/${enc(t)}/flaky/trigger`),
    text.map((t) => `/api/v1/runs/${enc(t)}`),
    text.map((t) => `/api/v1/runs?limit=${enc(t)}&outcome=${enc(t)}`),
    text.map((t) => `/api/v1/runs?before=${enc(t)}&${enc(t)}=1`),
  );

  it('no body, path, query or header makes the API answer 5xx; errors keep their shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
        path,
        body,
        fc.constantFrom('application/json', 'text/plain', '', 'application/json; charset=utf-16'),
        async (method, p, b, type) => {
          const res = await call(method, p, method === 'GET' ? undefined : b, {
            'content-type': type,
          });
          expect(res.status, `${method} ${p.slice(0, 80)}`).toBeLessThan(500);
          if (res.status >= 400 && res.status !== 431) {
            const error = res.json['error'] as Record<string, unknown>;
            expect(typeof error['code']).toBe('string');
            expect((error['message'] as string).length).toBeLessThanOrEqual(1000);
          }
        },
      ),
      { numRuns: 300 },
    );
    expect((await call('GET', '/healthz')).status).toBe(200);
  }, 120_000);
});
