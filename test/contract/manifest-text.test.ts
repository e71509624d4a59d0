/**
 * parseManifestText: JSON syntax errors become one located error; valid text parses.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize, parseManifestText } from '../../src/contract/manifest/index.js';
import { locateJsonSyntaxError } from '../../src/contract/manifest/json-location.js';
import { baseManifest } from './manifest-fixtures.js';

describe('parseManifestText', () => {
  it('parses valid JSON text like parseManifest', () => {
    const result = parseManifestText(JSON.stringify(baseManifest(), null, 2), 'cronix.json');
    expect(result.ok && canonicalize(result.manifest)).toContain('"app":"app"');
  });

  it('ignores a leading byte-order mark', () => {
    expect(parseManifestText(`\uFEFF${JSON.stringify(baseManifest())}`).ok).toBe(true);
  });

  it('reports a syntax error once, at the root, with line, column and source', () => {
    const text = '{\n  "version": 1,\n  "app": "x",\n  "jobs": [,]\n}\n';
    const result = parseManifestText(text, 'manifest.json');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.path).toBe('');
    expect(result.errors[0]?.message).toMatch(
      /^invalid JSON in manifest\.json at line 4, column 12: unexpected ","$/,
    );
  });

  it('locates errors at the end of the text and in empty text', () => {
    const cut = parseManifestText('{"version": 1,\n"app": ');
    expect(!cut.ok && cut.errors[0]?.message).toMatch(/^invalid JSON at line 2, column \d+: /);
    const empty = parseManifestText('');
    expect(!empty.ok && empty.errors[0]?.message).toMatch(/^invalid JSON at line 1, column 1: /);
  });

  it('reports validation errors of well-formed text with their paths', () => {
    const result = parseManifestText('{"version": 2, "app": "x", "jobs": []}');
    expect(!result.ok && result.errors.map((e) => e.path)).toEqual(['jobs', 'version']);
  });

  it('does not throw on a non-string argument', () => {
    expect(parseManifestText(42 as unknown as string).ok).toBe(false);
  });
});

describe('JSON syntax error location', () => {
  it.each([
    ['', 1, 1, 'unexpected end of text'],
    ['{"a": 1} x', 1, 10, 'unexpected "x"'],
    ['{"a": "x\ty"}', 1, 9, 'unexpected control character U+0009'],
    ['{\r\n"a" 1}', 2, 5, 'unexpected "1"'],
    ['[1, 2,]', 1, 7, 'unexpected "]"'],
    ['{"a": tru}', 1, 7, 'unexpected "t"'],
    ['"\\x"', 1, 3, 'unexpected "x"'],
  ])('%j → line %i, column %i', (text, line, column, reason) => {
    expect(locateJsonSyntaxError(text)).toEqual({ line, column, reason });
  });

  it('agrees with JSON.parse on validity, including for damaged JSON', () => {
    const damaged = fc
      .tuple(fc.json(), fc.nat(), fc.string({ maxLength: 2 }))
      .map(([text, at, insert]) => {
        const k = at % (text.length + 1);
        return text.slice(0, k) + insert + text.slice(k + 1);
      });
    fc.assert(
      fc.property(fc.oneof(fc.json(), damaged), (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        expect(locateJsonSyntaxError(text) === null).toBe(valid);
      }),
      { numRuns: 2000 },
    );
  });
});
