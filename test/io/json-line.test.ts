import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { jsonLine, type LineLevel } from '../../src/io/json-line.js';

/** What the daemon's pino logger (serve.ts's options) writes for `fields` and `msg`. */
function pinoLine(
  level: LineLevel,
  time: string,
  fields: Record<string, unknown>,
  msg: string,
): string {
  let out = '';
  const log = pino(
    {
      base: undefined,
      timestamp: () => `,"time":"${time}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: (s: string) => (out += s) },
  );
  log[level](fields, msg);
  return out;
}

const TEXTS = [
  'billing/settle',
  'quote " and backslash \\ inside',
  'line\nbreak\tand \u0001 control',
  'ünïcödé — ✓ 日本',
  '',
  'a'.repeat(300),
];

describe('jsonLine', () => {
  it('writes the bytes pino writes for the run lines, for every mix of values', () => {
    const time = '2026-11-27T10:00:00.123Z';
    let compared = 0;
    for (const level of ['info', 'warn'] as const)
      for (const text of TEXTS)
        for (const status of [200, null, 503]) {
          const fields: Record<string, unknown> = {
            event: 'run-ended',
            app: text,
            job: 'job-1',
            run_id: '019a0000-0000-7000-8000-000000000000',
            run_key: `app:${text}:1790000000`,
            trigger: 'schedule',
            outcome: status === 200 ? 'success' : 'failed',
            attempts: 3,
            status,
          };
          if (status !== 200) fields['err'] = text;
          const msg = `${text} ${String(fields['outcome'])}`;
          const line = jsonLine(level, time, fields, msg);
          expect(line).toBe(pinoLine(level, time, fields, msg));
          expect(JSON.parse(line)).toMatchObject({ level, time, msg, ...fields });
          compared++;
        }
    expect(compared).toBe(36);
  });

  it('writes a line without fields as pino does', () => {
    const time = '2026-11-27T10:00:00.000Z';
    expect(jsonLine('info', time, {}, 'hello')).toBe(pinoLine('info', time, {}, 'hello'));
  });
});
