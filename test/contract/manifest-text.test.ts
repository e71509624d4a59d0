/**
 * parseManifestText: JSON syntax errors become one located error; valid text parses.
 */
import { describe, expect, it } from 'vitest';
import { canonicalize, parseManifestText } from '../../src/contract/manifest/index.js';
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
    expect(result.errors[0]?.message).toMatch(/^invalid JSON in manifest\.json at line 4, column 12: /);
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
