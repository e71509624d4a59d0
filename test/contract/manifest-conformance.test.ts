/**
 * Runs every vector of the public cronix v1 manifest conformance file
 * (test/conformance/manifest-vectors.json) against parseManifest + canonicalize.
 *
 * Two invalid vectors are superseded by the seconds extension of SPEC §3 (where the SPEC and
 * the public protocol differ, the SPEC wins): a 6-field schedule is `sec min hour dom month dow`,
 * and `@every` goes down to 1 s. Those inputs must now parse; every other vector is run as is.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalize, parseManifest } from '../../src/contract/manifest/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const vectorsPath = path.resolve(repoRoot, 'test/conformance/manifest-vectors.json');

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

/** Invalid vectors that SPEC §3's seconds extension makes valid, with the reason. */
const SUPERSEDED: Readonly<Record<string, string>> = {
  'schedule-too-many-fields': 'six fields are sec min hour dom month dow (SPEC §3, seconds)',
  'every-too-fast': '@every may go down to 1s (SPEC §3, seconds)',
};

const file = JSON.parse(readFileSync(vectorsPath, 'utf8')) as {
  version: number;
  vectors: Vector[];
};

describe('manifest conformance vectors', () => {
  it('has the 29 vectors of protocol version 1', () => {
    expect(file.version).toBe(1);
    expect(file.vectors).toHaveLength(29);
  });

  it('names only superseded vectors that exist and are invalid in the file', () => {
    const invalid = file.vectors.filter((v) => !v.valid).map((v) => v.name);
    for (const name of Object.keys(SUPERSEDED)) expect(invalid).toContain(name);
  });

  for (const vector of file.vectors) {
    const superseded = SUPERSEDED[vector.name];
    if (superseded !== undefined) {
      it(`superseded: ${vector.name} parses (${superseded})`, () => {
        const result = parseManifest(vector.input);
        if (!result.ok) expect.fail(JSON.stringify(result.errors));
      });
    } else if (vector.valid) {
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
