import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  backoffSchedule,
  backoffSeconds,
  classifyStatus,
  exitCodeFor,
  lockTtlMs,
  rfc3339Utc,
  runKey,
  worstCaseFireSeconds,
  type FireOutcome,
} from '../../src/contract/run.js';
import { traceparent, uuidv7, uuidv7Time } from '../../src/fire/ids.js';

describe('run vocabulary', () => {
  it('run key format', () => {
    expect(runKey('billing', 'settle', Date.UTC(2026, 2, 29, 1), '0123456789abcdef')).toBe(
      'billing/settle#2026-03-29T01:00:00Z#0123456789abcdef',
    );
    // a fire of a seconds schedule keeps its seconds, without fractions
    expect(runKey('billing', 'tick', Date.UTC(2026, 2, 29, 1, 0, 5), '0123456789abcdef')).toBe(
      'billing/tick#2026-03-29T01:00:05Z#0123456789abcdef',
    );
  });

  it('backoff = min(min·2^(attempt−1), max), the seed table with defaults', () => {
    const d = { max_attempts: 10, min_seconds: 1, max_seconds: 60 };
    expect(backoffSchedule(d)).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    expect(backoffSeconds(3, { min_seconds: 5, max_seconds: 120 })).toBe(20);
    expect(backoffSchedule({ max_attempts: 1, min_seconds: 1, max_seconds: 60 })).toEqual([]);
    expect(backoffSchedule({ max_attempts: 4, min_seconds: 0, max_seconds: 1 })).toEqual([0, 0, 0]);
  });

  it('worst-case fire duration of the seed worked example is 1575 s', () => {
    expect(
      worstCaseFireSeconds({
        timeout_seconds: 300,
        retries: { max_attempts: 5, min_seconds: 5, max_seconds: 120 },
      }),
    ).toBe(1575);
    expect(lockTtlMs(300)).toBe(330_000);
  });

  it.each([
    [200, 'success'],
    [204, 'success'],
    [299, 'success'],
    [400, 'app-rejected'],
    [401, 'app-rejected'],
    [404, 'app-rejected'],
    [429, 'app-rejected'],
    [301, 'app-rejected'],
    [100, 'app-rejected'],
    [500, 'server-error'],
    [503, 'server-error'],
    [599, 'server-error'],
  ])('status %i → %s', (status, cls) => {
    expect(classifyStatus(status)).toBe(cls);
  });

  it.each<[FireOutcome, number]>([
    ['success', 0],
    ['duplicate', 0],
    ['app-rejected', 1],
    ['retries-exhausted', 2],
    ['internal-error', 3],
    ['lock-contended', 4],
    ['lock-unavailable', 75],
    ['stopped', 75],
  ])('%s exits %i', (outcome, code) => {
    expect(exitCodeFor(outcome)).toBe(code);
  });

  it('--contended-exit 75 changes only contention', () => {
    expect(exitCodeFor('lock-contended', 75)).toBe(75);
    expect(exitCodeFor('app-rejected', 75)).toBe(1);
  });
});

describe('rfc3339Utc', () => {
  const reference = (ms: number): string => {
    const iso = new Date(ms).toISOString();
    return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
  };

  it('formats like toISOString without zero milliseconds, repeated and past its memo size', () => {
    expect(rfc3339Utc(Date.UTC(2026, 2, 29, 1, 0, 0))).toBe('2026-03-29T01:00:00Z');
    expect(rfc3339Utc(Date.UTC(2026, 2, 29, 1, 0, 0, 7))).toBe('2026-03-29T01:00:00.007Z');
    expect(rfc3339Utc(-0)).toBe('1970-01-01T00:00:00Z');
    // 3 rounds over 10,000 instants (more than the memo holds), boundaries and odd milliseconds
    let seed = 7;
    const instants = Array.from({ length: 10_000 }, (_, i) => {
      seed = (seed * 48271) % 2147483647;
      return i % 2 === 0 ? 1_795_460_400_000 + (i % 1440) * 60_000 : seed * 997;
    });
    for (let round = 0; round < 3; round++)
      for (const ms of instants) expect(rfc3339Utc(ms)).toBe(reference(ms));
  });

  it('still refuses what is not an instant', () => {
    expect(() => rfc3339Utc(Number.NaN)).toThrow(RangeError);
    expect(() => rfc3339Utc(8.64e15 + 1)).toThrow(RangeError);
  });
});

describe('ids', () => {
  it('UUIDv7: format, version, variant, embedded time, ordering', () => {
    const t = Date.UTC(2026, 10, 21, 12, 0, 0, 123);
    const id = uuidv7(t);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uuidv7Time(id)).toBe(t);
    expect(uuidv7(t + 1) > uuidv7(t, new Uint8Array(10).fill(255))).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => uuidv7(t))).size).toBe(1000);
  });

  it('ids written byte by byte equal the string-built reference, for random times and bytes', () => {
    const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
    for (let i = 0; i < 2000; i++) {
      const ms = Math.floor(Math.random() * 2 ** 48);
      const rand = randomBytes(10);
      const span = randomBytes(8);
      const b = Buffer.alloc(16);
      b.writeUIntBE(ms, 0, 6);
      rand.copy(b, 6);
      b[6] = 0x70 | ((b[6] as number) & 0x0f);
      b[8] = 0x80 | ((b[8] as number) & 0x3f);
      const h = hex(b);
      const expected = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
      const id = uuidv7(ms, rand);
      expect(id).toBe(expected);
      expect(uuidv7Time(id)).toBe(ms);
      expect(traceparent(id, span)).toBe(`00-${h}-${hex(span)}-01`);
    }
    // a run id of another form (tests, imports) keeps the old derivation
    expect(traceparent('run-1', new Uint8Array(8).fill(255))).toBe('00-run1-ffffffffffffffff-01');
  });

  it('traceparent derives the trace id from the run id', () => {
    const id = uuidv7(Date.UTC(2026, 0, 1));
    expect(traceparent(id, new Uint8Array(8).fill(1))).toBe(
      `00-${id.replace(/-/g, '')}-0101010101010101-01`,
    );
  });
});
