/**
 * The REST API of a real daemon (in-process, real HTTP server, real ledger):
 * every endpoint, auth (401), validation (400 naming the field), 404, 409, 413,
 * garbage input, and /metrics as Prometheus text with counters that move.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;
let dir: string;

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200, delayMs: 50 }));
  dir = mkdtempSync(join(tmpdir(), 'cronix-api-'));
  const manifestPath = join(dir, 'manifest.json');
  writeFileSync(
    manifestPath,
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [
        {
          name: 'report',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/report` },
          auth: { secret_refs: ['env:API_TEST_SECRET'] },
        },
        {
          name: 'slow',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/slow` },
          policy: { concurrency: 'Enqueue', queue_max: 1 },
          auth: { secret_refs: ['env:API_TEST_SECRET'] },
        },
      ],
    }),
  );
  daemon = await startDaemon({
    manifests: [manifestPath],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { API_TEST_SECRET: 'api-test-secret-0123456789' },
  });
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

async function api(
  method: string,
  path: string,
  body?: string | object,
  auth = true,
): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      ...(auth ? { authorization: `Bearer ${daemon.token}` } : {}),
      'content-type': 'application/json',
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (metrics)
  }
  return { status: res.status, json, text };
}

describe('REST API', () => {
  it('GET /healthz and /openapi.json', async () => {
    // a single daemon leads itself: its role, and cronix_leader 1 (no "no leader" alert)
    expect((await api('GET', '/healthz')).json).toEqual({
      status: 'ok',
      jobs: 2,
      role: 'single',
      store: 'ok',
    });
    expect((await api('GET', '/metrics')).text).toMatch(/^cronix_leader 1$/m);
    const doc = (await api('GET', '/openapi.json')).json;
    expect(doc['openapi']).toBe('3.1.0');
    expect(Object.keys(doc['paths'] as object)).toContain('/api/v1/jobs/{app}/{job}/trigger');
  });

  it('GET /api/v1/jobs lists jobs with next fire and state', async () => {
    const { status, json } = await api('GET', '/api/v1/jobs');
    expect(status).toBe(200);
    const jobs = json['jobs'] as Record<string, unknown>[];
    expect(jobs.map((j) => j['job']).sort()).toEqual(['report', 'slow']);
    expect(jobs[0]).toMatchObject({
      app: 'shop',
      timezone: 'UTC',
      paused: false,
      active: 0,
      queued: 0,
      next_fire: expect.stringMatching(/^\d{4}-01-01T00:00:00Z$/),
    });
  });

  it('trigger → 202 with the run; GET /runs/{id}; GET /runs with filters', async () => {
    const t = await api('POST', '/api/v1/jobs/shop/report/trigger');
    expect(t.status).toBe(202);
    expect(t.json['admission']).toBe('started');
    const run = t.json['run'] as Record<string, unknown>;
    expect(Object.keys(run)).toEqual(
      expect.arrayContaining([
        'id',
        'run_key',
        'app',
        'job',
        'schedule_index',
        'scheduled_time',
        'trigger',
        'phase',
        'outcome',
        'attempts',
        'last_status',
        'created_at',
        'started_at',
        'ended_at',
      ]),
    );
    await sink.waitForRequests(1);
    let got = await api('GET', `/api/v1/runs/${run['id']}`);
    for (let i = 0; i < 50 && got.json['phase'] !== 'ended'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      got = await api('GET', `/api/v1/runs/${run['id']}`);
    }
    expect(got.json).toMatchObject({
      id: run['id'],
      phase: 'ended',
      outcome: 'success',
      attempts: 1,
      last_status: 200,
      trigger: 'manual',
    });
    const list = await api('GET', '/api/v1/runs?app=shop&job=report&outcome=success&limit=10');
    expect((list.json['runs'] as unknown[]).length).toBeGreaterThanOrEqual(1);
    const none = await api('GET', '/api/v1/runs?outcome=crashed');
    expect(none.json['runs']).toEqual([]);
  });

  it('trigger with at / after_seconds → scheduled; cancel → stopped; cancel again → 409', async () => {
    const later = await api('POST', '/api/v1/jobs/shop/report/trigger', { after_seconds: 3600 });
    expect(later.status).toBe(202);
    expect(later.json['admission']).toBe('scheduled');
    const id = (later.json['run'] as Record<string, unknown>)['id'];
    const at = await api('POST', '/api/v1/jobs/shop/report/trigger', {
      at: '2099-01-01T00:00:00Z',
    });
    expect(at.json['admission']).toBe('scheduled');
    const c = await api('POST', `/api/v1/runs/${id}/cancel`);
    expect(c.status).toBe(200);
    expect(c.json['run']).toMatchObject({ phase: 'ended', outcome: 'stopped' });
    expect((await api('POST', `/api/v1/runs/${id}/cancel`)).status).toBe(409);
  });

  it('replay of an ended run → 202; of a queued one → 409', async () => {
    const runs = (await api('GET', '/api/v1/runs?outcome=success')).json['runs'] as Record<
      string,
      unknown
    >[];
    const r = await api('POST', `/api/v1/runs/${runs[0]?.['id']}/replay`);
    expect(r.status).toBe(202);
    expect(r.json['admission']).toBe('started');
    const queued = await api('POST', '/api/v1/jobs/shop/report/trigger', { after_seconds: 600 });
    expect(
      (
        await api(
          'POST',
          `/api/v1/runs/${(queued.json['run'] as Record<string, unknown>)['id']}/replay`,
        )
      ).status,
    ).toBe(409);
  });

  it('pause and resume', async () => {
    expect((await api('POST', '/api/v1/jobs/shop/report/pause')).json).toEqual({
      app: 'shop',
      job: 'report',
      paused: true,
    });
    const jobs = (await api('GET', '/api/v1/jobs')).json['jobs'] as Record<string, unknown>[];
    expect(jobs.find((j) => j['job'] === 'report')?.['paused']).toBe(true);
    expect((await api('POST', '/api/v1/jobs/shop/report/resume')).json['paused']).toBe(false);
  });

  it('mutations and reads without or with a wrong token → 401', async () => {
    for (const path of [
      '/api/v1/jobs/shop/report/trigger',
      '/api/v1/jobs/shop/report/pause',
      '/api/v1/runs/x/cancel',
      '/api/v1/runs/x/replay',
    ]) {
      const r = await api('POST', path, {}, false);
      expect(r.status).toBe(401);
      expect(r.json['error']).toMatchObject({ code: 'unauthorized' });
    }
    const wrong = await fetch(`${daemon.url}/api/v1/jobs/shop/report/trigger`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
    expect((await api('GET', '/api/v1/jobs', undefined, false)).status).toBe(401);
    expect((await api('GET', '/api/v1/jobs')).status).toBe(200);
  });

  it('validation errors → 400 naming the field', async () => {
    const cases: [string, string, string | object | undefined, string][] = [
      ['POST', '/api/v1/jobs/shop/report/trigger', { at: 'tomorrow' }, 'at'],
      ['POST', '/api/v1/jobs/shop/report/trigger', { after_seconds: -5 }, 'after_seconds'],
      ['POST', '/api/v1/jobs/shop/report/trigger', { after_seconds: 'soon' }, 'after_seconds'],
      ['POST', '/api/v1/jobs/shop/report/trigger', { bogus: 1 }, 'bogus'],
      ['POST', '/api/v1/jobs/shop/report/trigger', '{not json', ''],
      ['POST', '/api/v1/jobs/shop/report/trigger', '[1,2]', ''],
      ['GET', '/api/v1/runs?limit=0', undefined, 'limit'],
      ['GET', '/api/v1/runs?limit=abc', undefined, 'limit'],
      ['GET', '/api/v1/runs?outcome=great', undefined, 'outcome'],
      ['GET', '/api/v1/runs?phase=done', undefined, 'phase'],
      ['GET', '/api/v1/runs?before=nope', undefined, 'before'],
      ['GET', '/api/v1/runs?colour=red', undefined, 'colour'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await api(method, path, body);
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(r.json['error']).toMatchObject({ code: 'invalid_request', path: field });
      expect(((r.json['error'] as Record<string, string>)['message'] ?? '').length).toBeGreaterThan(
        10,
      );
    }
  });

  it('unknown jobs, runs and routes → 404', async () => {
    expect((await api('POST', '/api/v1/jobs/shop/nope/trigger')).status).toBe(404);
    expect((await api('GET', '/api/v1/runs/01234567-0000-7000-8000-000000000000')).status).toBe(
      404,
    );
    expect((await api('POST', '/api/v1/jobs/shop/nope/pause')).status).toBe(404);
    expect((await api('GET', '/api/v2/everything')).status).toBe(404);
  });

  it('an oversized body → 413; the daemon keeps running through garbage', async () => {
    const big = await api(
      'POST',
      '/api/v1/jobs/shop/report/trigger',
      JSON.stringify({ at: 'x'.repeat(70 * 1024) }),
    );
    expect(big.status).toBe(413);
    for (const garbage of [
      '\u0000\u0001\u0002',
      '{"at":',
      'null',
      '"string"',
      '{"at": {"$gt": 1}}',
      '9'.repeat(5000),
    ]) {
      const r = await api('POST', '/api/v1/jobs/shop/report/trigger', garbage);
      expect(r.status).toBe(400);
    }
    const raw = await fetch(`${daemon.url}/api/v1/runs/%ff%fe`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect([400, 404]).toContain(raw.status);
    expect((await api('GET', '/healthz')).status).toBe(200);
  });

  it('/metrics is Prometheus text and its counters move as runs happen', async () => {
    const read = async () => (await api('GET', '/metrics')).text;
    const count = (text: string) =>
      Number(
        /cronix_job_run_total\{job="shop\/report",outcome="success"\} (\d+)/.exec(text)?.[1] ?? 0,
      );
    const before = await read();
    for (const line of before.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eE]+|NaN|[+-]Inf$/);
    }
    for (const name of [
      'cronix_scheduler_dispatch_total',
      'cronix_scheduler_dispatch_lag_seconds',
      'cronix_job_run_total',
      'cronix_job_run_duration_seconds',
      'cronix_job_queue_depth',
      'cronix_job_active_runs',
      'cronix_job_duplicate_suppressed_total',
      'cronix_job_backfill_total',
      'cronix_job_missed_total',
      'cronix_run_completeness',
    ]) {
      expect(before).toContain(`# TYPE ${name}`);
    }
    await api('POST', '/api/v1/jobs/shop/report/trigger');
    let after = await read();
    for (let i = 0; i < 50 && count(after) <= count(before); i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await read();
    }
    expect(count(after)).toBe(count(before) + 1);
  });
});
