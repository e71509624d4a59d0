/**
 * `cronix trigger` as a real process against a real, scripted HTTP server:
 * outcomes, exit codes, retries and backoff, timeouts, headers and signatures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../src/contract/signature.js';
import { sequence, startSink, type Sink } from '../helpers/sink.js';
import {
  dirArgs,
  events,
  normalizedJob,
  runShim,
  shimDirs,
  TEST_SECRET,
  writeSpec,
  type ShimDirs,
} from '../helpers/shim.js';

let sink: Sink;
let dirs: ShimDirs;
let n = 0;

beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});

/** A fresh job (own name → own lock/state) pointing at the sink. */
function job(policy: Record<string, unknown> = {}, request: Record<string, unknown> = {}): string {
  dirs = shimDirs();
  const name = `job-${++n}`;
  writeSpec(
    dirs.specDir,
    'app',
    normalizedJob('app', {
      name,
      schedule: '*/5 * * * *',
      request: { url: `${sink.url}/run/${name}?x=1`, body: '{"hello":"world"}', ...request },
      policy: {
        timeout_seconds: 2,
        retries: { max_attempts: 3, min_seconds: 1, max_seconds: 2 },
        ...policy,
      },
    }),
  );
  return `app.${name}`;
}

const since = (): number => sink.requests.length;

describe('cronix trigger over HTTP', () => {
  it('2xx → exit 0, one attempt, a success line', async () => {
    const target = job();
    sink.setScript(sequence([200]));
    const before = since();
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(0);
    expect(sink.requests.length - before).toBe(1);
    expect(events(run)).toEqual(['fire-start', 'attempt', 'success']);
    expect(run.stderr).toBe('');
  });

  it('4xx stops at once → exit 1, app-rejected with a body excerpt', async () => {
    const target = job();
    sink.setScript(sequence([{ status: 422, body: 'invoice 42 is locked' }]));
    const before = since();
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(1);
    expect(sink.requests.length - before).toBe(1);
    const last = run.lines.at(-1) ?? {};
    expect(last).toMatchObject({
      event: 'app-rejected',
      level: 'error',
      status: 422,
      body_excerpt: 'invoice 42 is locked',
    });
  });

  it('5xx then 2xx → exit 0 after one backoff', async () => {
    const target = job();
    sink.setScript(sequence([503, 200]));
    const before = since();
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(0);
    expect(sink.requests.length - before).toBe(2);
    expect(events(run)).toEqual(['fire-start', 'attempt', 'server-error', 'attempt', 'success']);
  });

  it('retries exhausted → exit 2 with the exact backoff schedule (1 s, 2 s)', async () => {
    const target = job();
    sink.setScript(sequence([500, 502, 503]));
    const before = since();
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(2);
    const got = sink.requests.slice(before);
    expect(got).toHaveLength(3);
    const failures = run.lines.filter((l) => l['event'] === 'server-error');
    expect(failures.map((l) => l['backoff_seconds'])).toEqual([1, 2, undefined]);
    // arrivals are spaced by at least the backoff (causality, not a timing benchmark)
    expect((got[1]?.receivedAt ?? 0) - (got[0]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1000);
    expect((got[2]?.receivedAt ?? 0) - (got[1]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(2000);
    expect(run.lines.at(-1)).toMatchObject({ event: 'retries-exhausted', level: 'error' });
    expect(
      run.lines.filter((l) =>
        ['success', 'app-rejected', 'retries-exhausted'].includes(l['event'] as string),
      ),
    ).toHaveLength(1);
  });

  it('the timeout closes the connection at the deadline, then retries', async () => {
    const target = job({
      timeout_seconds: 1,
      retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 },
    });
    sink.setScript(sequence([{ hang: true }, 200]));
    const before = since();
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(0);
    const hung = sink.requests[before];
    const closedAt = await hung!.whenClosed;
    expect(closedAt - hung!.receivedAt).toBeGreaterThanOrEqual(900);
    expect(closedAt - hung!.receivedAt).toBeLessThan(2500);
    expect(run.lines.find((l) => l['event'] === 'attempt-failed')).toMatchObject({
      err: 'timeout after 1s',
    });
  });

  it('a dropped connection is retried like a 5xx', async () => {
    const target = job({ retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 } });
    sink.setScript(sequence([{ drop: true }, 204]));
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(0);
    expect(events(run)).toContain('attempt-failed');
  });

  it('does not follow redirects', async () => {
    const target = job();
    sink.setScript(sequence([{ status: 302, headers: { location: '/elsewhere' } }, 200]));
    const before = since();
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(1);
    expect(sink.requests.slice(before).map((r) => r.url)).toEqual([
      expect.stringMatching(/^\/run\//),
    ]);
  });

  it('caps the response body it reads and logs', async () => {
    const target = job();
    sink.setScript(sequence([{ bigBody: 5 * 1024 * 1024, status: 400 }]));
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(1);
    const excerpt = run.lines.at(-1)?.['body_excerpt'] as string;
    expect(excerpt.length).toBeLessThanOrEqual(1024);
    expect(excerpt.length).toBeGreaterThan(0);
  });

  it('sends every header exactly; Run-Id constant; each attempt freshly signed and verifiable', async () => {
    const target = job({}, { headers: { 'X-Tenant': 'acme' } });
    sink.setScript(sequence([500, 500, 200]));
    const before = since();
    const run = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:05:00Z']);
    expect(run.code).toBe(0);
    const got = sink.requests.slice(before);
    const runId = got[0]?.headers['x-cron-run-id'] as string;
    expect(runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const stamps: number[] = [];
    got.forEach((req, i) => {
      const h = req.headers;
      expect(req.method).toBe('POST');
      expect(req.bodyText).toBe('{"hello":"world"}');
      expect(h['x-cron-run-id']).toBe(runId);
      expect(h['x-cron-run-key']).toMatch(
        new RegExp(`^app/${target.split('.')[1]}#2026-01-01T00:05:00Z#[0-9a-f]{16}$`),
      );
      expect(h['idempotency-key']).toBe(h['x-cron-run-key']);
      expect(h['x-cron-schedule-name']).toBe(target.split('.')[1]);
      expect(h['x-cron-fire-time']).toBe(String(Date.UTC(2026, 0, 1, 0, 5) / 1000));
      expect(Number(h['x-cron-fire-time-actual'])).toBeGreaterThan(Date.UTC(2026, 0, 1) / 1000);
      expect(h['x-cron-attempt']).toBe(String(i + 1));
      expect(h['x-tenant']).toBe('acme');
      expect(h['traceparent']).toMatch(
        new RegExp(`^00-${runId.replace(/-/g, '')}-[0-9a-f]{16}-01$`),
      );
      expect(h['x-cron-fencing-token']).toBeUndefined(); // host scope
      const v = verify({
        header: h['x-cron-signature'] as string,
        secrets: [TEST_SECRET],
        method: req.method,
        path: req.url,
        body: req.body,
        now: req.receivedAt / 1000,
      });
      expect(v).toMatchObject({ ok: true, secretIndex: 0 });
      stamps.push(Number(/t=(\d+)/.exec(h['x-cron-signature'] as string)?.[1]));
    });
    expect(stamps[1]).toBeGreaterThan(stamps[0] as number); // signed at send time, 1 s backoff apart
    expect(stamps[2]).toBeGreaterThan(stamps[1] as number);
    expect(run.lines.every((l) => l['run_id'] === runId)).toBe(true);
  });

  it('a spec whose static headers would override the injected ones is refused (exit 3), naming each', async () => {
    // the engine also ignores such headers in any letter case (test/fire/engine.test.ts);
    // the spec is validated like a manifest, so a hand-edited one never gets that far
    dirs = shimDirs();
    const name = `job-${++n}`;
    const j = normalizedJob('app', {
      name,
      schedule: '@hourly',
      request: { url: `${sink.url}/x` },
    });
    j.request!.headers = {
      'X-Cron-Run-Id': 'forged',
      'x-cron-attempt': '99',
      'Idempotency-Key': 'forged',
    };
    writeSpec(dirs.specDir, 'app', j);
    const before = since();
    const run = await runShim(`app.${name}`, dirArgs(dirs));
    expect(run.code).toBe(3);
    expect(run.lines).toHaveLength(1);
    const msg = String(run.lines[0]?.['msg']);
    for (const h of ['X-Cron-Run-Id', 'x-cron-attempt', 'Idempotency-Key']) {
      expect(msg).toContain(`job/request/headers/${h}: header "${h}" is set by cronix`);
    }
    expect(since()).toBe(before);
  });

  it('carries X-Cron-Previous-Success-Time after a success', async () => {
    const target = job();
    sink.setScript(sequence([200]));
    const before = since();
    await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z']);
    await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:05:00Z']);
    const [first, second] = sink.requests.slice(before);
    expect(first?.headers['x-cron-previous-success-time']).toBeUndefined();
    expect(Number(second?.headers['x-cron-previous-success-time'])).toBeGreaterThan(0);
  });

  it('redacts before cutting: a 4xx body whose secret straddles the 1 KiB cut shows none of it', async () => {
    const target = job();
    sink.setScript(sequence([{ status: 400, body: `${'x'.repeat(1012)}${TEST_SECRET}` }]));
    const run = await runShim(target, dirArgs(dirs));
    expect(run.code).toBe(1);
    const excerpt = String(run.lines.at(-1)?.['body_excerpt']);
    expect(excerpt.length).toBeLessThanOrEqual(1024);
    expect(excerpt).toContain('[REDACTED]'.slice(0, 8));
    for (let k = 4; k <= TEST_SECRET.length; k++)
      expect(run.stdout).not.toContain(TEST_SECRET.slice(0, k));
  });

  it('never writes the secret into its log lines, even when the app echoes it', async () => {
    const target = job();
    sink.setScript(sequence([{ status: 400, body: `your secret is ${TEST_SECRET}, right?` }]));
    const run = await runShim(target, dirArgs(dirs));
    expect(run.stdout).not.toContain(TEST_SECRET);
    expect(run.stdout).toContain('[REDACTED]');
  });
});
