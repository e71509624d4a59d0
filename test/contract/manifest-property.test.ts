/**
 * Property tests of the manifest contract: random valid manifests round-trip through the
 * canonical form, and no input whatsoever makes parseManifest throw or report a path that
 * does not exist.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  changeHash,
  parseManifest,
  parseManifestText,
} from '../../src/contract/manifest/index.js';
import { applyMutation, mutation, validManifest } from './manifest-arbitraries.js';
import { lookup, segmentsOf, type Json } from './manifest-fixtures.js';

/** Every error path's parent exists in the input (own properties), and the message says something. */
function expectSaneErrors(raw: unknown): void {
  const result = parseManifest(raw);
  if (result.ok) return;
  expect(result.errors.length).toBeGreaterThan(0);
  for (const error of result.errors) {
    expect(typeof error.path).toBe('string');
    expect(typeof error.message).toBe('string');
    expect(error.message.length).toBeGreaterThan(0);
    const segments = segmentsOf(error.path);
    expect(lookup(raw, segments.slice(0, -1)).found, `parent of ${error.path} exists`).toBe(true);
  }
}

describe('manifest properties', () => {
  it('random valid manifests parse, and the canonical form is a fixed point', () => {
    fc.assert(
      fc.property(validManifest, (m) => {
        const first = parseManifest(m);
        if (!first.ok) throw new Error(JSON.stringify(first.errors));
        const canonical = canonicalize(first.manifest);
        const second = parseManifest(JSON.parse(canonical));
        if (!second.ok) throw new Error(JSON.stringify(second.errors));
        expect(canonicalize(second.manifest)).toBe(canonical);
        expect(second.manifest).toEqual(first.manifest);
        const text = parseManifestText(JSON.stringify(m, null, 2));
        expect(text.ok && canonicalize(text.manifest)).toBe(canonical);
        for (const j of first.manifest.jobs) {
          expect(changeHash(second.manifest, j.name, 0)).toBe(
            changeHash(first.manifest, j.name, 0),
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  it('never throws on arbitrary values', () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
    });
    fc.assert(
      fc.property(anything, (raw) => {
        expectSaneErrors(raw);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary JSON text', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expectSaneErrors(JSON.parse(text));
        expect(() => parseManifestText(text)).not.toThrow();
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(parseManifestText(text).ok).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('never throws on mutations of valid manifests: deleted or replaced fields', () => {
    fc.assert(
      fc.property(validManifest, mutation, (m, edits) => {
        const raw = JSON.parse(JSON.stringify(m)) as Json;
        applyMutation(raw, edits);
        expectSaneErrors(raw);
      }),
      { numRuns: 500 },
    );
  });

  it('handles special numbers and prototype keys', () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, -0, 2 ** 53 + 1, Number.MIN_VALUE]) {
      expectSaneErrors({
        version: value,
        app: 'a',
        jobs: [
          {
            name: 'a',
            schedule: '@daily',
            request: { url: 'https://x' },
            policy: { timeout_seconds: value },
          },
        ],
      });
    }
    expectSaneErrors(
      JSON.parse('{"__proto__":{"version":1},"constructor":1,"jobs":[{"__proto__":[]}]}'),
    );
  });
});
