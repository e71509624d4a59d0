/**
 * Runs every vector of the public cronix v1 manifest conformance file
 * (shared/conformance/manifest-vectors.json) against parseManifest + canonicalize.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalize, parseManifest } from '../../src/contract/manifest/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const vectorsPath = path.resolve(repoRoot, '../shared/conformance/manifest-vectors.json');

interface ValidVector {
  name: string;
  valid: true;
  input: unknown;
  expected: string;
}

interface InvalidVector {
  name: string;
  valid: false;
  input: unknown;
  errorPaths: string[];
}

type Vector = ValidVector | InvalidVector;

const file = JSON.parse(readFileSync(vectorsPath, 'utf8')) as {
  version: number;
  vectors: Vector[];
};

describe('manifest conformance vectors', () => {
  it('has the 29 vectors of protocol version 1', () => {
    expect(file.version).toBe(1);
    expect(file.vectors).toHaveLength(29);
  });

  for (const vector of file.vectors) {
    if (vector.valid) {
      it(`valid: ${vector.name}`, () => {
        const result = parseManifest(vector.input);
        if (!result.ok) expect.fail(JSON.stringify(result.errors));
        expect(canonicalize(result.manifest)).toBe(vector.expected);
      });
    } else {
      it(`invalid: ${vector.name}`, () => {
        const result = parseManifest(vector.input);
        expect(result.ok).toBe(false);
        const paths = result.ok ? [] : result.errors.map((e) => e.path);
        for (const expected of vector.errorPaths) expect(paths).toContain(expected);
      });
    }
  }
});
