import { describe, expect, it } from 'vitest';
import { fc, test } from '@fast-check/vitest';
import {
  MAX_REPORT_OUTPUT_BYTES,
  outputTail,
  parseReport,
  reportBody,
  type Report,
} from '../../src/contract/report.js';

const T = Date.UTC(2026, 10, 26, 12, 0, 0);

function ended(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'ended',
    run: {
      id: '0193a0b0-0000-7000-8000-000000000001',
      run_key: 'shop/report#2026-11-26T12:00:00Z#abc123',
      app: 'shop',
      job: 'report',
      schedule_index: 0,
      scheduled_time: '2026-11-26T12:00:00Z',
      host: 'web-1',
      started_at: '2026-11-26T12:00:01Z',
      ended_at: '2026-11-26T12:00:03Z',
      outcome: 'success',
      exit_code: 0,
      attempts: 1,
      attempt_log: [
        { attempt: 1, started_at: '2026-11-26T12:00:01Z', duration_ms: 2000, status: 200 },
      ],
      ...over,
    },
  };
}

describe('report contract', () => {
  it('reads a full ended report', () => {
    const p = parseReport(ended());
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.report.run.scheduledTime).toBe(T);
    expect(p.report.run.outcome).toBe('success');
    expect(p.report.run.attemptLog[0]?.status).toBe(200);
    expect(p.report.spoolDropped).toBe(0);
  });

  it.each([
    [{ kind: 'begun', run: {} }, '/kind', '"begun"'],
    [ended({ outcome: 'missed' }), '/run/outcome', 'missed'],
    [ended({ app: 'Shop' }), '/run/app', 'Shop'],
    [ended({ run_key: 'other/job#x#y' }), '/run/run_key', 'other/job'],
    [ended({ id: 'not-a-uuid' }), '/run/id', 'not-a-uuid'],
    [ended({ scheduled_time: 'yesterday' }), '/run/scheduled_time', 'yesterday'],
    [ended({ sneaky: 1 }), '/run/sneaky', 'not a known field'],
    [ended({ attempts: -1 }), '/run/attempts', '-1'],
    [ended({ output: 'x'.repeat(MAX_REPORT_OUTPUT_BYTES + 1) }), '/run/output', 'at most'],
    [[], '/', '[]'],
  ])('refuses %# naming the field and the value', (body, field, value) => {
    const p = parseReport(body);
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.error.field).toBe(field);
    expect(p.error.message).toContain(value);
    expect(p.error.message.length).toBeLessThan(200);
  });

  it('a started report carries no outcome', () => {
    const body = ended();
    body['kind'] = 'started';
    expect(parseReport(body).ok).toBe(false);
    delete (body['run'] as Record<string, unknown>)['outcome'];
    expect(parseReport(body).ok).toBe(true);
  });

  test.prop([
    fc.constantFrom('started', 'ended'),
    fc.integer({ min: 0, max: 10 }),
    fc.string({ maxLength: 50 }),
    fc.nat({ max: 100 }),
  ])('reportBody then parseReport gives the same report', (kind, attempts, error, dropped) => {
    const report: Report = {
      kind: kind as Report['kind'],
      spoolDropped: dropped,
      run: {
        id: '0193a0b0-0000-7000-8000-000000000002',
        runKey: 'a/b#2026-11-26T12:00:00Z#h',
        app: 'a',
        job: 'b',
        scheduleIndex: null,
        scheduledTime: T,
        host: 'h',
        startedAt: T + 5,
        fencingToken: kind === 'started' ? '42' : null,
        endedAt: kind === 'ended' ? T + 900 : null,
        outcome: kind === 'ended' ? 'retries_exhausted' : null,
        exitCode: kind === 'ended' ? 2 : null,
        attempts,
        lastStatus: null,
        error: error === '' ? null : error,
        durationMs: kind === 'ended' ? 895 : null,
        attemptLog: Array.from({ length: attempts }, (_, i) => ({
          attempt: i + 1,
          startedAt: T + i,
          durationMs: 1,
          status: 503,
          exitCode: null,
          error: 'HTTP 503',
        })),
        output: kind === 'ended' ? 'out' : null,
        outputTruncated: false,
      },
    };
    const p = parseReport(JSON.parse(JSON.stringify(reportBody(report))));
    expect(p).toEqual({ ok: true, report });
  });

  it('outputTail keeps the last bytes on a character boundary', () => {
    const text = 'é'.repeat(100); // 2 bytes each
    const tail = outputTail(text, 51);
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(51);
    expect(tail).toBe('é'.repeat(25));
    expect(outputTail('short', 100)).toBe('short');
  });
});
