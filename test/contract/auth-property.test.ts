/** Property tests: sign→verify round-trips, and any single-byte change is rejected. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign, verify } from '../../src/contract/signature.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const HEX = '0123456789abcdef';

const secretArb = fc.string({ minLength: 1, maxLength: 64, unit: 'binary' });
const methodArb = fc.oneof(fc.constantFrom(...METHODS), fc.stringMatching(/^[A-Za-z]{1,10}$/));
const pathArb = fc.oneof(
  fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)),
  fc.string({ unit: 'binary', maxLength: 80 }),
);
const asciiPathArb = fc.stringMatching(/^\/[ -~]{0,60}$/);
const bodyArb = fc.oneof(
  fc.uint8Array({ maxLength: 512 }),
  fc.string({ unit: 'binary', maxLength: 256 }),
);
const timestampArb = fc.integer({ min: 0, max: 2 ** 40 });
const skewArb = fc.integer({ min: -300, max: 300 });

describe('sign → verify', () => {
  it('round-trips for any secret, method, path, body and in-window clock', () => {
    fc.assert(
      fc.property(
        secretArb,
        methodArb,
        pathArb,
        bodyArb,
        timestampArb,
        skewArb,
        (secret, method, path, body, timestamp, skew) => {
          const header = sign({ secret, method, path, body, timestamp });
          expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
          const result = verify({
            header,
            secrets: [secret],
            method,
            path,
            body,
            now: timestamp + skew,
          });
          expect(result).toEqual({ ok: true, secretIndex: 0, timestamp });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reports the index of the signing secret among rotated ones', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(secretArb, { minLength: 1, maxLength: 8 }),
        fc.nat(),
        timestampArb,
        (secrets, pick, timestamp) => {
          const index = pick % secrets.length;
          const header = sign({ secret: secrets[index]!, method: 'POST', path: '/', timestamp });
          const result = verify({ header, secrets, method: 'POST', path: '/', now: timestamp });
          expect(result).toEqual({ ok: true, secretIndex: index, timestamp });
        },
      ),
    );
  });
});

describe('any single change fails', () => {
  const base = { method: 'POST', now: 0 };

  it('flipping one body byte gives SignatureMismatch', () => {
    fc.assert(
      fc.property(
        secretArb,
        asciiPathArb,
        fc.uint8Array({ minLength: 1, maxLength: 256 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        timestampArb,
        (secret, path, body, at, xor, timestamp) => {
          const header = sign({ secret, method: base.method, path, body, timestamp });
          const tampered = Uint8Array.from(body);
          const i = at % tampered.length;
          tampered[i] = tampered[i]! ^ xor;
          const result = verify({
            header,
            secrets: [secret],
            method: base.method,
            path,
            body: tampered,
            now: timestamp,
          });
          expect(result).toMatchObject({ ok: false, code: 'SignatureMismatch' });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('changing one path byte gives SignatureMismatch', () => {
    fc.assert(
      fc.property(
        secretArb,
        asciiPathArb,
        bodyArb,
        fc.nat(),
        fc.integer({ min: 1, max: 94 }),
        timestampArb,
        (secret, path, body, at, shift, timestamp) => {
          const header = sign({ secret, method: 'POST', path, body, timestamp });
          const i = at % path.length;
          const code = path.charCodeAt(i) - 32;
          const replaced = String.fromCharCode(((code + shift) % 95) + 32);
          const tampered = path.slice(0, i) + replaced + path.slice(i + 1);
          const result = verify({
            header,
            secrets: [secret],
            method: 'POST',
            path: tampered,
            body,
            now: timestamp,
          });
          expect(result).toMatchObject({ ok: false, code: 'SignatureMismatch' });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('changing one method letter (beyond case) gives SignatureMismatch', () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.constantFrom(...METHODS),
        fc.nat(),
        fc.integer({ min: 1, max: 25 }),
        timestampArb,
        (secret, method, at, shift, timestamp) => {
          const header = sign({ secret, method, path: '/p', body: 'b', timestamp });
          const i = at % method.length;
          const letter = UPPER[(UPPER.indexOf(method[i]!) + shift) % 26]!;
          const tampered = method.slice(0, i) + letter + method.slice(i + 1);
          const result = verify({
            header,
            secrets: [secret],
            method: tampered,
            path: '/p',
            body: 'b',
            now: timestamp,
          });
          expect(result).toMatchObject({ ok: false, code: 'SignatureMismatch' });
        },
      ),
    );
  });

  it('changing one hex digit of v1 gives SignatureMismatch; a non-hex one MalformedHeader', () => {
    fc.assert(
      fc.property(
        secretArb,
        bodyArb,
        fc.integer({ min: 0, max: 63 }),
        fc.integer({ min: 1, max: 15 }),
        fc.constantFrom('g', 'z', 'x', ' ', '-', '+', 'é'),
        timestampArb,
        (secret, body, i, shift, junk, timestamp) => {
          const header = sign({ secret, method: 'POST', path: '/p', body, timestamp });
          const start = header.indexOf('v1=') + 3;
          const digit = header[start + i]!;
          const swap = (c: string) => header.slice(0, start + i) + c + header.slice(start + i + 1);
          const opts = { secrets: [secret], method: 'POST', path: '/p', body, now: timestamp };
          const hexFlip = HEX[(HEX.indexOf(digit) + shift) % 16]!;
          expect(verify({ ...opts, header: swap(hexFlip) })).toMatchObject({
            code: 'SignatureMismatch',
          });
          const broken = verify({ ...opts, header: swap(junk) });
          expect(broken.ok).toBe(false);
          // A space at either end of v1 is trimmed, shortening it: still malformed.
          if (!broken.ok) expect(broken.code).toBe('MalformedHeader');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('changing the timestamp (within the window) gives SignatureMismatch', () => {
    fc.assert(
      fc.property(
        secretArb,
        timestampArb,
        fc.integer({ min: 1, max: 300 }),
        (secret, timestamp, delta) => {
          const header = sign({ secret, method: 'POST', path: '/p', timestamp });
          const forged = header.replace(/^t=\d+/, `t=${timestamp + delta}`);
          const result = verify({
            header: forged,
            secrets: [secret],
            method: 'POST',
            path: '/p',
            now: timestamp,
          });
          expect(result).toMatchObject({ ok: false, code: 'SignatureMismatch' });
        },
      ),
    );
  });

  it('a different secret gives SignatureMismatch', () => {
    fc.assert(
      fc.property(secretArb, secretArb, timestampArb, (a, b, timestamp) => {
        fc.pre(a !== b && !(a.replace(/\0+$/, '') === b.replace(/\0+$/, '')));
        const header = sign({ secret: a, method: 'GET', path: '/', timestamp });
        const result = verify({ header, secrets: [b], method: 'GET', path: '/', now: timestamp });
        expect(result).toMatchObject({ ok: false, code: 'SignatureMismatch' });
      }),
    );
  });
});
