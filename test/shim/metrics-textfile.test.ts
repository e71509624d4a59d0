import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderTextfile } from '../../src/shim/metrics.js';
import { sequence, startSink, type Sink } from '../helpers/sink.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});

/** Parses Prometheus text exposition into `name{labels}` → value, checking every line's syntax. */
function parseProm(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+]+)$/.exec(
        line,
      );
    if (!m) throw new Error(`not Prometheus text: ${line}`);
    out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

describe('--metrics-textfile', () => {
  it('renders valid exposition text with escaped labels', () => {
    const text = renderTextfile({
      app: 'a"b',
      job: 'j',
      outcome: 'success',
      attempts: 2,
      durationSeconds: 1.5,
      lastSuccessMs: 1_767_225_600_000,
      firedAtMs: 1_767_225_600_000,
      fires: 7,
    });
    const m = parseProm(text);
    expect(m.get('cronix_job_last_outcome{app="a\\"b",job="j",outcome="success"}')).toBe(1);
    expect(m.get('cronix_job_last_outcome{app="a\\"b",job="j",outcome="app-rejected"}')).toBe(0);
    expect(m.get('cronix_job_fires_total{app="a\\"b",job="j"}')).toBe(7);
  });

  it('writes the job file atomically after each fire, with outcome, attempts, last success and fire count', async () => {
    const dirs = shimDirs();
    const metrics = mkdtempSync(join(tmpdir(), 'cronix-textfile-'));
    writeSpec(
      dirs.specDir,
      'billing',
      normalizedJob('billing', {
        name: 'settle',
        schedule: '@hourly',
        request: { url: `${sink.url}/s` },
        policy: { retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 } },
      }),
    );
    sink.setScript(sequence([500, 200]));
    const ok = await runShim('billing.settle', [
      ...dirArgs(dirs),
      '--metrics-textfile',
      metrics,
      '--fire-time',
      '2026-01-01T00:00:00Z',
    ]);
    expect(ok.code).toBe(0);
    expect(readdirSync(metrics)).toEqual(['cronix_billing_settle.prom']);
    let m = parseProm(readFileSync(join(metrics, 'cronix_billing_settle.prom'), 'utf8'));
    const l = 'app="billing",job="settle"';
    expect(m.get(`cronix_job_last_outcome{${l},outcome="success"}`)).toBe(1);
    expect(m.get(`cronix_job_last_attempts{${l}}`)).toBe(2);
    expect(m.get(`cronix_job_fires_total{${l}}`)).toBe(1);
    const lastSuccess = m.get(`cronix_job_last_success_timestamp_seconds{${l}}`) as number;
    expect(lastSuccess).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(m.get(`cronix_job_last_duration_seconds{${l}}`)).toBeGreaterThan(0);

    sink.setScript(sequence([404]));
    const rejected = await runShim('billing.settle', [
      ...dirArgs(dirs),
      '--metrics-textfile',
      metrics,
      '--fire-time',
      '2026-01-01T01:00:00Z',
    ]);
    expect(rejected.code).toBe(1);
    m = parseProm(readFileSync(join(metrics, 'cronix_billing_settle.prom'), 'utf8'));
    expect(m.get(`cronix_job_last_outcome{${l},outcome="app-rejected"}`)).toBe(1);
    expect(m.get(`cronix_job_last_outcome{${l},outcome="success"}`)).toBe(0);
    expect(m.get(`cronix_job_fires_total{${l}}`)).toBe(2);
    expect(m.get(`cronix_job_last_success_timestamp_seconds{${l}}`)).toBe(lastSuccess);
    expect(readdirSync(metrics)).toEqual(['cronix_billing_settle.prom']); // no temp files left
  });
});
