/** The shim's JSON lines: redaction happens before any cut, and never touches the vocabulary. */
import { describe, expect, it } from 'vitest';
import {
  logFireEvent,
  MAX_EXCERPT_CHARS,
  MAX_FIELD_CHARS,
  ShimLogger,
} from '../../src/shim/log.js';

function capture(): { logger: ShimLogger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const logger = new ShimLogger(
    (line) => void out.push(line),
    () => Date.UTC(2026, 0, 1),
  );
  return { logger, lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const SECRET = 'k7Qz-very-secret-signing-key-0042';

describe('ShimLogger', () => {
  it('a body that ends in the secret past 1 KiB shows no part of it', () => {
    const { logger, lines } = capture();
    logger.redactSecrets([SECRET]);
    for (const pad of [1000, 1012, 1020, 1024, 5000]) {
      const body = `${'x'.repeat(pad)}${SECRET}`;
      logFireEvent(logger, {
        event: 'app-rejected',
        terminal: true,
        status: 400,
        bodyExcerpt: body,
      });
    }
    for (const line of lines()) {
      const excerpt = String(line['body_excerpt']);
      expect(excerpt.length).toBeLessThanOrEqual(MAX_EXCERPT_CHARS);
      for (let k = 4; k <= SECRET.length; k++) expect(excerpt).not.toContain(SECRET.slice(0, k));
    }
  });

  it('redacts secrets in messages, errors and context, but never rewrites time, level or event', () => {
    const { logger, lines } = capture();
    // a (long enough) secret that happens to equal an event name
    logger.redactSecrets(['duplicate-suppressed', SECRET]);
    logger.bind({ app: 'app', job: 'job' });
    logFireEvent(logger, { event: 'duplicate-suppressed', terminal: true, err: `x ${SECRET} y` });
    const [line] = lines();
    expect(line).toMatchObject({ event: 'duplicate-suppressed', level: 'info' });
    expect(line?.['err']).toBe('x [REDACTED] y');
    expect(JSON.stringify(line)).not.toContain(SECRET);
  });

  it('cuts every other string field to its cap after redaction', () => {
    const { logger, lines } = capture();
    logger.log('error', 'internal-error', 'm'.repeat(1_000_000), { err: 'e'.repeat(50_000) });
    const [line] = lines();
    expect(String(line?.['msg']).length).toBeLessThanOrEqual(MAX_FIELD_CHARS);
    expect(String(line?.['err']).length).toBeLessThanOrEqual(MAX_FIELD_CHARS);
    expect(String(line?.['msg'])).toMatch(/…\(\d+ more characters\)$/);
  });

  it('knows when a terminal line was written', () => {
    const { logger } = capture();
    logFireEvent(logger, { event: 'attempt', terminal: false, attempt: 1 });
    logFireEvent(logger, { event: 'record-failed', terminal: false, attempt: 1, err: 'x' });
    expect(logger.ended).toBe(false);
    logFireEvent(logger, { event: 'success', terminal: true, attempt: 1, status: 200 });
    expect(logger.ended).toBe(true);
  });
});
