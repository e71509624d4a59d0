/**
 * The response body an attempt log keeps (about 4 KiB): secrets are redacted before the cut, so
 * a secret straddling it never leaves its first characters in the log, the API or the UI.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { RESPONSE_KEPT_CHARS, keptResponse } from '../../src/daemon/executor.js';
import { REDACTED } from '../../src/secrets/resolve.js';

const SECRET = 'sk_live_0123456789abcdefXYZ';

describe('keptResponse', () => {
  it('a secret straddling the cut leaves none of its characters behind', () => {
    for (let before = RESPONSE_KEPT_CHARS - SECRET.length; before < RESPONSE_KEPT_CHARS; before++) {
      const body = `${'a'.repeat(before)}${SECRET}${'b'.repeat(200)}`;
      const kept = keptResponse(body, [SECRET]);
      expect(kept.length).toBe(RESPONSE_KEPT_CHARS);
      expect(kept).not.toContain(SECRET.slice(0, 4));
      expect(kept.slice(before)).toBe(
        `${REDACTED}${'b'.repeat(200)}`.slice(0, RESPONSE_KEPT_CHARS - before),
      );
    }
  });

  it('keeps a short body whole and redacts every secret in it', () => {
    expect(keptResponse(`x ${SECRET} y ${SECRET}`, [SECRET, 'other'])).toBe(
      `x ${REDACTED} y ${REDACTED}`,
    );
  });

  test.prop([
    fc
      .string({ minLength: 8, maxLength: 40 })
      .filter((s) => !s.includes('\u0000') && !s.includes('[')),
    fc.integer({ min: 0, max: RESPONSE_KEPT_CHARS + 100 }),
  ])('no prefix of 4+ characters of the secret ever ends the kept text', (secret, at) => {
    const filler = '\u0000'.repeat(at);
    const kept = keptResponse(`${filler}${secret}${'\u0000'.repeat(50)}`, [secret]);
    expect(kept.length).toBeLessThanOrEqual(RESPONSE_KEPT_CHARS);
    for (let n = 4; n <= secret.length; n++) expect(kept.endsWith(secret.slice(0, n))).toBe(false);
  });
});
