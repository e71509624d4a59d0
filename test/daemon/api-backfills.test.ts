/**
 * The backfill routes of a real daemon (in-process, real HTTP server, SQLite ledger): bad input
 * answered 400 naming the field, an unknown job 404, the dry run's run keys, a backfill started
 * by the token file's token (recorded under its name, `default`), listed, shown with its plan, cancelled once (409 after), and the
 * routes in the OpenAPI document.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { until } from '../helpers/common.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200, delayMs: 300 }));
  const dir = mkdtempSync(join(tmpdir(), 'cronix-api-bf-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [
        {
          name: 'yearly',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/yearly` },
          auth: { secret_refs: ['env:API_TEST_SECRET'] },
        },
      ],
    }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { API_TEST_SECRET: 'api-test-secret-0123456789' },
  });
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are read loosely in a test
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

const PATH = '/api/v1/jobs/shop/yearly/backfills';

it('refuses bad input with 400 naming the field; an unknown job is 404', async () => {
  const cases: [unknown, string, RegExp][] = [
    ['', '', /"from" and "to"/],
    ['{nope', '', /not valid JSON/],
    [{ from: '2020-01-01T00:00:00Z' }, 'to', /RFC 3339/],
    [{ from: 'yesterday', to: '2026-01-01T00:00:00Z' }, 'from', /found "yesterday"/],
    [{ from: '2026-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' }, 'to', /must be after/],
    [
      { from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', parallel: 0 },
      'parallel',
      /1 to 1024/,
    ],
    [
      { from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', stop_after_failures: 1.5 },
      'stop_after_failures',
      /integer/,
    ],
    [
      { from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', only_missing: 'yes' },
      'only_missing',
      /true or false/,
    ],
    [
      { from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', speed: 9 },
      'speed',
      /unknown field/,
    ],
  ];
  for (const [body, path, message] of cases) {
    const r = await api('POST', PATH, body);
    expect(r.status, JSON.stringify(body)).toBe(400);
    expect(r.json['error']['path'] ?? '').toBe(path);
    expect(r.json['error']['message']).toMatch(message);
  }
  const huge = await api('POST', '/api/v1/jobs/shop/nope/backfills', {
    from: '2020-01-01T00:00:00Z',
    to: '2026-01-01T00:00:00Z',
  });
  expect(huge.status).toBe(404);
  expect((await api('GET', '/api/v1/backfills?state=sleeping')).status).toBe(400);
  expect((await api('GET', '/api/v1/backfills/none')).status).toBe(404);
  expect((await api('POST', '/api/v1/backfills/none/cancel')).status).toBe(404);
});

it('dry run, start, list, show with its plan, cancel once; in the OpenAPI document', async () => {
  const range = { from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' };
  const dry = await api('POST', PATH, { ...range, dry_run: true });
  expect(dry.status).toBe(200);
  expect(dry.json['instants']).toBe(6);
  const keys = (dry.json['runs'] as { run_key: string }[]).map((r) => r.run_key);
  expect(keys).toHaveLength(6);
  expect(keys[0]).toMatch(/^shop\/yearly#2020-01-01T00:00:00Z#[0-9a-f]{16}$/);
  expect((await api('GET', '/api/v1/backfills')).json['backfills']).toEqual([]); // nothing recorded

  const started = await api('POST', PATH, range);
  expect(started.status).toBe(202);
  const b = started.json['backfill'];
  expect(b).toMatchObject({
    app: 'shop',
    job: 'yearly',
    state: 'running',
    total: 6,
    parallel: 1,
    created_by: 'default',
  });
  await until(() => (sink.requests.length >= 1 ? true : undefined), 10_000, 'a first run');
  const cancelled = await api('POST', `/api/v1/backfills/${b.id}/cancel`);
  expect(cancelled.status).toBe(200);
  expect(cancelled.json['backfill']).toMatchObject({
    state: 'cancelled',
    reason: 'cancelled by default',
  });
  expect((await api('POST', `/api/v1/backfills/${b.id}/cancel`)).status).toBe(409);
  const shown = await until(async () => {
    const r = (await api('GET', `/api/v1/backfills/${b.id}`)).json;
    return r['counts']['active'] === 0 ? r : undefined;
  });
  expect(shown['items'].map((i: { run_key: string }) => i.run_key)).toEqual(keys);
  expect(shown['items'][0]).toMatchObject({ outcome: 'success', phase: 'ended' });
  expect(shown['items'][5]).toMatchObject({ run_id: null, outcome: null });
  expect(shown['counts']).toMatchObject({ succeeded: 1, pending: 5 });
  const listed = await api('GET', '/api/v1/backfills?app=shop&job=yearly&state=cancelled');
  expect(listed.json['backfills'].map((x: { id: string }) => x.id)).toEqual([b.id]);

  const doc = (await api('GET', '/openapi.json')).json;
  for (const p of [
    PATH.replace('shop/yearly', '{app}/{job}'),
    '/api/v1/backfills',
    '/api/v1/backfills/{id}',
    '/api/v1/backfills/{id}/cancel',
  ])
    expect(Object.keys(doc['paths'])).toContain(p);
  expect(doc['components']['schemas']['Backfill']).toBeDefined();
});
