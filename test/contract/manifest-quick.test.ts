/**
 * `acceptManifest` (the TypeBox-free verdict the trigger shim uses on every
 * fire) agrees with `parseManifest` on every input: valid manifests, damaged
 * ones and arbitrary values; and the committed compiled checker is the one the
 * schema compiles to today.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderCompiledCheck } from '../../src/contract/manifest/compiled-source.js';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { acceptManifest } from '../../src/contract/manifest/quick.js';
import { applyMutation, mutation, validManifest } from './manifest-arbitraries.js';
import type { Json } from './manifest-fixtures.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function expectSameVerdict(raw: unknown): boolean {
  const full = parseManifest(raw);
  const quick = acceptManifest(raw);
  if (full.ok) expect(quick).toEqual(full.manifest);
  else expect(quick).toBeNull();
  return full.ok;
}

describe('acceptManifest', () => {
  it('compiled-check.ts is up to date with the schema', () => {
    const committed = readFileSync(
      path.join(repoRoot, 'src/contract/manifest/compiled-check.ts'),
      'utf8',
    );
    if (committed !== renderCompiledCheck()) {
      expect.fail(
        'src/contract/manifest/compiled-check.ts is stale: run `npm run gen:check` and commit it',
      );
    }
  });

  it('accepts every random valid manifest with the same normalized result', () => {
    fc.assert(
      fc.property(validManifest, (m) => {
        expect(expectSameVerdict(m)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with parseManifest on damaged manifests (both verdicts occur)', () => {
    const verdicts = new Set<boolean>();
    fc.assert(
      fc.property(validManifest, mutation, (m, edits) => {
        const raw = JSON.parse(JSON.stringify(m)) as Json;
        applyMutation(raw, edits);
        verdicts.add(expectSameVerdict(raw));
      }),
      { numRuns: 1000 },
    );
    expect([...verdicts].sort()).toEqual([false, true]);
  });

  it('agrees on arbitrary values and JSON', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything({ withNullPrototype: true }), fc.jsonValue()), (raw) => {
        expectSameVerdict(raw);
      }),
      { numRuns: 500 },
    );
  });

  it('rejects what only the semantic rules catch', () => {
    const base = { version: 1, app: 'a', jobs: [{ name: 'j', request: { url: 'https://x' } }] };
    expect(acceptManifest({ ...base, jobs: [{ ...base.jobs[0], schedule: '0 0 30 2 *' }] })).toBe(
      null,
    );
    expect(
      acceptManifest({
        ...base,
        jobs: [{ ...base.jobs[0], schedule: '@daily', timezone: 'Mars/X' }],
      }),
    ).toBe(null);
    expect(acceptManifest({ ...base, jobs: [{ ...base.jobs[0], schedule: '@daily' }] })).not.toBe(
      null,
    );
  });

  it('checks uniqueItems (notify[].on) like the full parser, instead of throwing', () => {
    const withOn = (on: string[]) => ({
      version: 1,
      app: 'a',
      notifiers: { hook: { type: 'webhook', url: 'https://hooks.example/x' } },
      jobs: [
        {
          name: 'j',
          schedule: '@daily',
          request: { url: 'https://x' },
          notify: [{ to: 'hook', on }],
        },
      ],
    });
    expect(expectSameVerdict(withOn(['missed', 'recovered']))).toBe(true);
    expect(expectSameVerdict(withOn(['failed', 'failed']))).toBe(false);
  });
});
