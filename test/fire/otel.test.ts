/**
 * Traces over OTLP/HTTP (issue 29): the real `cronix trigger` and `cronix serve` (a PostgreSQL
 * replica, so there is a leader epoch), with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a local
 * OTLP/HTTP receiver in this test, export one span per run and one per attempt: the attempt
 * spans are children of the run span, their span ids are those of the `traceparent` headers the
 * app received (so the app's spans hang under them), the trace id is the run id, and job, run
 * key, outcome and leader epoch are attributes. Without the variable nothing is sent.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/common.js';
import { dropSchema, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import { api, manifestDir, spawnServe, TEST_SECRET as SERVE_SECRET } from '../helpers/serve.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
  attributes: Record<string, string | number>;
}

const spans: Span[] = [];
/** What the app received: traceparent and run key of each request. */
const received: { traceparent: string; runKey: string }[] = [];
let collector: Server;
let app: Server;
let otlp = '';
let appUrl = '';
/** The app answers 503 to the first attempt of a run key, 200 to the rest. */
const seenKeys = new Set<string>();
const schemas: string[] = [];

const body = async (req: IncomingMessage): Promise<string> => {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
};

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpAttr {
  key: string;
  value: OtlpValue;
}

beforeAll(async () => {
  collector = createServer((req, res) => {
    void body(req).then((text) => {
      if (req.url === '/v1/traces') {
        const data = JSON.parse(text) as {
          resourceSpans: {
            resource: { attributes: OtlpAttr[] };
            scopeSpans: {
              spans: (Omit<Span, 'attributes' | 'service'> & { attributes: OtlpAttr[] })[];
            }[];
          }[];
        };
        const value = (v: OtlpValue): string | number => v.stringValue ?? Number(v.intValue ?? NaN);
        for (const rs of data.resourceSpans) {
          const service = String(
            value(rs.resource.attributes.find((a) => a.key === 'service.name')?.value ?? {}),
          );
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({
                ...s,
                service,
                attributes: Object.fromEntries(s.attributes.map((a) => [a.key, value(a.value)])),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }).listen(0, '127.0.0.1');
  await once(collector, 'listening');
  otlp = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  app = createServer((req, res) => {
    const runKey = String(req.headers['x-cron-run-key']);
    received.push({ traceparent: String(req.headers['traceparent']), runKey });
    const first = !seenKeys.has(runKey);
    seenKeys.add(runKey);
    res.writeHead(first ? 503 : 200).end();
  }).listen(0, '127.0.0.1');
  await once(app, 'listening');
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});

afterAll(async () => {
  collector.close();
  app.close();
  for (const s of schemas) await dropSchema(s);
});

const JOB = (name: string): Record<string, unknown> => ({
  name,
  schedule: '0 0 1 1 *',
  request: { url: `${appUrl}/${name}` },
  policy: { retries: { max_attempts: 3, min_seconds: 1, max_seconds: 1 } },
});

/** The run span and attempt spans of the trace whose run key is `runKey`. */
function trace(runKey: string): { run: Span; attempts: Span[] } | undefined {
  const run = spans.find((s) => s.attributes['cronix.run_key'] === runKey && !s.parentSpanId);
  if (!run) return undefined;
  const attempts = spans
    .filter((s) => s.parentSpanId === run.spanId)
    .sort(
      (a, b) => Number(a.attributes['cronix.attempt']) - Number(b.attributes['cronix.attempt']),
    );
  return attempts.length >= 2 ? { run, attempts } : undefined;
}

function expectLinked(t: { run: Span; attempts: Span[] }, runKey: string, runId: string): void {
  const headers = received.filter((r) => r.runKey === runKey).map((r) => r.traceparent);
  expect(headers).toHaveLength(2);
  expect(t.attempts).toHaveLength(2);
  expect(t.run.traceId).toBe(runId.replace(/-/g, ''));
  for (const [i, span] of t.attempts.entries()) {
    const [, traceId, spanId] = (headers[i] as string).split('-');
    expect(span.traceId).toBe(traceId);
    expect(span.spanId).toBe(spanId);
    expect(span.attributes['cronix.attempt']).toBe(i + 1);
    expect(span.attributes['cronix.run_key']).toBe(runKey);
  }
  expect(t.attempts.map((a) => a.attributes['http.response.status_code'])).toEqual([503, 200]);
  expect(t.run.attributes['cronix.outcome']).toBe('success');
}

describe('with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('the shim exports a run span and one child span per attempt, parents of its traceparents', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'otel', normalizedJob('otel', JOB('shim-job')));
    const run = await runShim('otel.shim-job', dirArgs(dirs), {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
    });
    expect(run.code, run.stdout).toBe(0);
    const start = run.lines.find((l) => l['event'] === 'fire-start') as Record<string, string>;
    const runKey = start['run_key'] as string;
    // the shim flushes before it exits: the spans are there already
    const t = trace(runKey);
    expect(t, JSON.stringify(spans)).toBeDefined();
    expectLinked(t!, runKey, start['run_id'] as string);
    expect(t!.run.service).toBe('cronix-shim');
    expect(t!.run.attributes['cronix.job']).toBe('otel/shim-job');
  }, 60_000);

  it('the daemon does too, with the leader epoch', async () => {
    const schema = schemaName('otel');
    schemas.push(schema);
    const dir = manifestDir('otel', [JOB('daemon-job')]);
    const served = await spawnServe(dir, 0, {
      args: ['--store', withSchema(PG_URL, schema)],
      env: {
        PATH: process.env['PATH'],
        CRON_SECRET: SERVE_SECRET,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      },
    });
    try {
      const t = await until(
        async () => {
          const r = await api(served, 'POST', '/api/v1/jobs/otel/daemon-job/trigger');
          return r.status < 300 ? r.json : undefined;
        },
        30_000,
        'the trigger (a replica leads first)',
      );
      const id = (t['run'] as Record<string, string>)['id'] as string;
      const run = await until(
        async () => {
          const r = (await api(served, 'GET', `/api/v1/runs/${id}`)).json;
          return r['phase'] === 'ended' ? r : undefined;
        },
        20_000,
        'the run to end',
      );
      const runKey = (run['run_key'] ?? run['runKey']) as string;
      const got = await until(() => trace(runKey), 20_000, 'the spans');
      expectLinked(got, runKey, id);
      expect(got.run.service).toBe('cronix-daemon');
      expect(got.run.attributes['cronix.leader_epoch']).toBeGreaterThanOrEqual(1);
      expect(got.attempts[0]?.attributes['cronix.leader_epoch']).toBe(
        got.run.attributes['cronix.leader_epoch'],
      );
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  }, 90_000);
});

describe('without it', () => {
  it('nothing is sent', async () => {
    const before = spans.length;
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'otel', normalizedJob('otel', JOB('quiet-job')));
    const run = await runShim('otel.quiet-job', dirArgs(dirs));
    expect(run.code, run.stdout).toBe(0);
    expect(received.filter((r) => r.runKey.startsWith('otel/quiet-job'))).toHaveLength(2);
    expect(spans.length).toBe(before);
  }, 30_000);
});
