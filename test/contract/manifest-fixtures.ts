/**
 * Shared fixtures of the manifest tests: a small valid manifest, path helpers, and
 * assertions on parse results.
 */
import { expect } from 'vitest';
import {
  parseManifest,
  type Manifest,
  type ManifestError,
} from '../../src/contract/manifest/index.js';

/** A JSON-like value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A fresh minimal valid manifest with one job `a`. */
export function baseManifest(): Record<string, Json> {
  return {
    version: 1,
    app: 'app',
    jobs: [{ name: 'a', schedule: '@hourly', request: { url: 'https://x.example.com/cron/a' } }],
  };
}

/** Unescapes one error-path segment (RFC 6901). */
export function unescapeSegment(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Splits an error path into unescaped segments (`""` is the root: no segments). */
export function segmentsOf(path: string): string[] {
  return path === '' ? [] : path.split('/').map(unescapeSegment);
}

/** Own-property lookup along segments; `{ found: false }` as soon as one is missing. */
export function lookup(
  root: unknown,
  segments: readonly string[],
): { found: boolean; value: unknown } {
  let current: unknown = root;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return { found: false, value: undefined };
    if (!Object.prototype.hasOwnProperty.call(current, segment))
      return { found: false, value: undefined };
    current = (current as Record<string, unknown>)[segment];
  }
  return { found: true, value: current };
}

/**
 * Sets (or with `value === undefined` deletes) the value at a slash path, creating objects on
 * the way. Segments are raw keys (no escaping); array indices are plain numbers.
 */
export function setPath(root: Record<string, Json>, path: string, value: Json | undefined): void {
  const parts = path.split('/');
  let current: Record<string, Json> | Json[] = root;
  for (const part of parts.slice(0, -1)) {
    const container = current as Record<string, Json>;
    const next = container[part];
    if (typeof next !== 'object' || next === null) {
      const created: Record<string, Json> = {};
      container[part] = created;
      current = created;
    } else {
      current = next;
    }
  }
  const last = parts.at(-1) ?? '';
  const target = current as Record<string, Json>;
  if (value === undefined) delete target[last];
  else
    Object.defineProperty(target, last, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
}

/** The base manifest with the given paths set. */
export function manifestWith(
  changes: Readonly<Record<string, Json | undefined>>,
): Record<string, Json> {
  const m = baseManifest();
  for (const [path, value] of Object.entries(changes)) setPath(m, path, value);
  return m;
}

/** Parses and expects success. */
export function expectValid(raw: unknown): Manifest {
  const result = parseManifest(raw);
  if (!result.ok)
    expect.fail(`expected a valid manifest, got ${JSON.stringify(result.errors, null, 2)}`);
  return result.manifest;
}

/** Parses and expects failure; returns the errors. */
export function expectInvalid(raw: unknown): ManifestError[] {
  const result = parseManifest(raw);
  if (result.ok)
    expect.fail(`expected errors, got a valid manifest: ${JSON.stringify(result.manifest)}`);
  return result.errors;
}

/** `n` distinct job names. */
export function jobNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `job-${String(i).padStart(4, '0')}`);
}
