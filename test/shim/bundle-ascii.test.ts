/**
 * The binary's chunks are ASCII-only (scripts/ascii-bundle.mjs): one non-ASCII character, even in
 * a comment, makes V8 hold a chunk's whole source as a two-byte string — the daemon's serve chunk
 * was 4.4 MB of heap instead of 2.2 for the life of the process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { asciiComments } from '../../scripts/ascii-bundle.mjs';

const BIN = fileURLToPath(new URL('../../dist/bin', import.meta.url));

describe('the bundled binary', () => {
  it('has no non-ASCII character in any chunk', () => {
    const chunks = readdirSync(BIN).filter((f) => f.endsWith('.mjs'));
    expect(chunks.length).toBeGreaterThan(10);
    const offenders = chunks.filter((f) =>
      /[\u0080-\uffff]/.test(readFileSync(join(BIN, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});

describe('asciiComments', () => {
  it('folds comments code unit by code unit, so every column stays where it was', () => {
    const source =
      "const a = 1; // response\u2019s URL \u2192 ok \u{1F600}\n/* a \u2014 b */ const b = '\\u2019';\n";
    const out = asciiComments(source, 'x.mjs');
    expect(out).toBe("const a = 1; // response's URL > ok ??\n/* a - b */ const b = '\\u2019';\n");
    expect(out).toHaveLength(source.length);
  });

  it('leaves an ASCII chunk as it is', () => {
    const source = 'export const x = "\\u00e4"; // plain\n';
    expect(asciiComments(source, 'x.mjs')).toBe(source);
  });

  it('fails on a non-ASCII character outside a comment, naming the chunk', () => {
    expect(() => asciiComments("const s = 'caf\u00e9'; // caf\u00e9\n", 'serve-X.mjs')).toThrow(
      /serve-X\.mjs: a non-ASCII character outside comments at offset 14/,
    );
  });
});
