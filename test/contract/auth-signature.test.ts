/** Unit tests for the signing contract: header parsing, skew window, rotation, failures. */
import { createHmac } from 'node:crypto';
import { fc, test as propTest } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_SKEW_SECONDS,
  MIN_MAX_SKEW_SECONDS,
  SIGNATURE_HEADER,
  effectiveMaxSkew,
  parseSignatureHeader,
  sign,
  signPayload,
  signingBytes,
  verify,
  type VerifyOptions,
} from '../../src/contract/signature.js';

const SECRET = 'whsec_unit_test_secret_value';
const T = 1_730_000_000;
const HEX = 'ab'.repeat(32);

function signed(overrides: Partial<Parameters<typeof sign>[0]> = {}): string {
  return sign({
    secret: SECRET,
    method: 'POST',
    path: '/jobs/x?a=1',
    body: 'hi',
    timestamp: T,
    ...overrides,
  });
}

function check(overrides: Partial<VerifyOptions> = {}) {
  return verify({
    header: signed(),
    secrets: [SECRET],
    method: 'POST',
    path: '/jobs/x?a=1',
    body: 'hi',
    now: T,
    ...overrides,
  });
}

describe('constants', () => {
  it('match the spec', () => {
    expect(SIGNATURE_HEADER).toBe('X-Cron-Signature');
    expect(DEFAULT_MAX_SKEW_SECONDS).toBe(300);
    expect(MIN_MAX_SKEW_SECONDS).toBe(30);
    expect(signPayload).toBe(sign);
  });
});

describe('sign', () => {
  it('emits t=<seconds>,v1=<64 lowercase hex>', () => {
    expect(signed()).toMatch(/^t=1730000000,v1=[0-9a-f]{64}$/);
  });

  it('signs <t>.<METHOD>.<path>.<body> with the method upper-cased', () => {
    const bytes = new TextDecoder().decode(signingBytes(T, 'patch', '/p?q=1', 'b'));
    expect(bytes).toBe('1730000000.PATCH./p?q=1.b');
    expect(signed({ method: 'post' })).toBe(signed({ method: 'POST' }));
  });

  propTest.prop([
    fc.string({ unit: 'binary', minLength: 1 }),
    fc.string({ unit: 'binary' }),
    fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array()),
    fc.constantFrom('get', 'POST', 'Patch'),
  ])(
    'is the HMAC-SHA256 of signingBytes, for any path and body (lone surrogates too)',
    (secret, path, body, method) => {
      const mac = createHmac('sha256', secret)
        .update(signingBytes(T, method, path, body))
        .digest('hex');
      expect(sign({ secret, method, path, body, timestamp: T })).toBe(`t=${T},v1=${mac}`);
    },
  );

  it('treats a missing body, an empty string and zero bytes alike', () => {
    const none = signed({ body: undefined });
    expect(signed({ body: '' })).toBe(none);
    expect(signed({ body: new Uint8Array(0) })).toBe(none);
  });

  it('signs string bodies as UTF-8', () => {
    expect(signed({ body: 'café ☕' })).toBe(signed({ body: new TextEncoder().encode('café ☕') }));
  });

  it('rejects programmer errors without echoing the secret', () => {
    expect(() => signed({ secret: '' })).toThrow(RangeError);
    expect(() => signed({ timestamp: 1.5 })).toThrow(/timestamp/);
    expect(() => signed({ timestamp: -1 })).toThrow(/timestamp/);
    try {
      signed({ timestamp: Number.NaN });
    } catch (err) {
      expect(String(err)).not.toContain(SECRET);
    }
  });
});

describe('parseSignatureHeader', () => {
  it('parses the canonical form', () => {
    expect(parseSignatureHeader(`t=${T},v1=${HEX}`)).toEqual({ ok: true, timestamp: T, v1: HEX });
  });

  it('is order free and ignores unknown segments', () => {
    expect(parseSignatureHeader(`v2=zz,v1=${HEX},foo=bar,t=${T}`)).toEqual({
      ok: true,
      timestamp: T,
      v1: HEX,
    });
  });

  it('tolerates spaces and tabs around segments, keys and values', () => {
    expect(parseSignatureHeader(` t = ${T} ,\tv1=${HEX}\t`)).toEqual({
      ok: true,
      timestamp: T,
      v1: HEX,
    });
  });

  it('accepts upper-case hex and returns it lower-cased', () => {
    const parsed = parseSignatureHeader(`t=${T},v1=${HEX.toUpperCase()}`);
    expect(parsed).toEqual({ ok: true, timestamp: T, v1: HEX });
  });

  it.each([
    ['empty', ''],
    ['only whitespace', '  '],
    ['missing t', `v1=${HEX}`],
    ['missing v1', `t=${T}`],
    ['only another version', `t=${T},v2=${HEX}`],
    ['segment without =', `t${T},v1=${HEX}`],
    ['empty segment', `t=${T},,v1=${HEX}`],
    ['trailing comma', `t=${T},v1=${HEX},`],
    ['t not decimal', `t=abc,v1=${HEX}`],
    ['t negative', `t=-5,v1=${HEX}`],
    ['t fractional', `t=1.5,v1=${HEX}`],
    ['t hex literal', `t=0x10,v1=${HEX}`],
    ['t empty', `t=,v1=${HEX}`],
    ['t beyond safe integers', `t=9999999999999999,v1=${HEX}`],
    ['v1 too short', `t=${T},v1=${HEX.slice(2)}`],
    ['v1 too long', `t=${T},v1=${HEX}00`],
    ['v1 not hex', `t=${T},v1=${'g'.repeat(64)}`],
    ['duplicate t', `t=${T},t=${T},v1=${HEX}`],
    ['duplicate v1', `t=${T},v1=${HEX},v1=${HEX}`],
  ])('rejects %s as MalformedHeader', (_name, header) => {
    const parsed = parseSignatureHeader(header);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.code).toBe('MalformedHeader');
      expect(parsed.message.length).toBeGreaterThan(0);
    }
  });
});

describe('verify', () => {
  it('accepts a correctly signed request', () => {
    expect(check()).toEqual({ ok: true, secretIndex: 0, timestamp: T });
  });

  it.each([null, undefined])('reports MissingSignature for a %s header', (header) => {
    expect(check({ header })).toMatchObject({ ok: false, code: 'MissingSignature' });
  });

  it('reports MalformedHeader for an empty header', () => {
    expect(check({ header: '' })).toMatchObject({ ok: false, code: 'MalformedHeader' });
  });

  it.each([
    [300, true],
    [-300, true],
    [301, false],
    [-301, false],
  ])('with the default window, skew %i s ok=%s', (skew, ok) => {
    const result = check({ now: T + skew });
    expect(result.ok).toBe(ok);
    if (!result.ok) expect(result.code).toBe('StaleTimestamp');
  });

  it('honours a custom window at its exact boundary', () => {
    expect(check({ now: T + 120, maxSkewSeconds: 120 }).ok).toBe(true);
    expect(check({ now: T + 121, maxSkewSeconds: 120 })).toMatchObject({ code: 'StaleTimestamp' });
  });

  it('raises windows below 30 s to 30 s', () => {
    expect(effectiveMaxSkew(0)).toBe(30);
    expect(effectiveMaxSkew(-10)).toBe(30);
    expect(effectiveMaxSkew(undefined)).toBe(300);
    expect(check({ now: T + 30, maxSkewSeconds: 5 }).ok).toBe(true);
    expect(check({ now: T - 30, maxSkewSeconds: 0 }).ok).toBe(true);
    expect(check({ now: T + 31, maxSkewSeconds: 5 })).toMatchObject({ code: 'StaleTimestamp' });
  });

  it('floors a fractional now', () => {
    expect(check({ now: T + 300.9 }).ok).toBe(true);
  });

  it('checks staleness before the MAC', () => {
    expect(check({ now: T + 1000, secrets: ['wrong'] })).toMatchObject({ code: 'StaleTimestamp' });
  });

  it('reports which rotated secret matched', () => {
    expect(check({ secrets: ['old-1', SECRET, 'old-2'] })).toEqual({
      ok: true,
      secretIndex: 1,
      timestamp: T,
    });
    expect(check({ secrets: [SECRET, SECRET] })).toMatchObject({ ok: true, secretIndex: 0 });
  });

  it('never accepts an empty secret', () => {
    // HMAC zero-pads keys, so a '\0' key yields exactly the MAC an empty key would.
    const header = sign({ secret: '\0', method: 'POST', path: '/', timestamp: T });
    const opts = { header, method: 'POST', path: '/', now: T };
    expect(verify({ ...opts, secrets: [''] })).toMatchObject({ code: 'SignatureMismatch' });
    expect(verify({ ...opts, secrets: ['', '\0'] })).toMatchObject({ ok: true, secretIndex: 1 });
  });

  it('reports SignatureMismatch when no secrets are configured', () => {
    expect(check({ secrets: [] })).toMatchObject({ ok: false, code: 'SignatureMismatch' });
  });

  it.each([
    ['body', { body: 'hI' }],
    ['path', { path: '/jobs/x?a=2' }],
    ['method', { method: 'PUT' }],
    ['secret', { secrets: ['other'] }],
  ])('reports SignatureMismatch for a different %s', (_name, overrides) => {
    expect(check(overrides)).toMatchObject({ ok: false, code: 'SignatureMismatch' });
  });

  it('never puts secret values in messages', () => {
    const cases: Partial<VerifyOptions>[] = [
      { header: null },
      { header: 'garbage' },
      { now: T + 999 },
      { body: 'tampered' },
    ];
    for (const c of cases) {
      const result = check({ ...c, secrets: [SECRET, 'second-secret-value'] });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.message).not.toContain(SECRET);
        expect(result.message).not.toContain('second-secret-value');
      }
    }
  });
});
