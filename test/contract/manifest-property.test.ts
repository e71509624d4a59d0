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
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  parseManifest,
  parseManifestText,
} from '../../src/contract/manifest/index.js';
import { lookup, segmentsOf, type Json } from './manifest-fixtures.js';

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,62}$/);
const schedule = fc.oneof(
  fc.constantFrom(
    '@hourly',
    '@daily',
    '@midnight',
    '@weekly',
    '@monthly',
    '@yearly',
    '@annually',
    '@every 90s',
    '@every 1h30m',
  ),
  fc
    .tuple(
      fc.integer({ min: 0, max: 59 }),
      fc.integer({ min: 0, max: 23 }),
      fc.constantFrom('*', '1-5', 'MON', '0,6'),
    )
    .map(([m, h, dow]) => `${m} ${h} * * ${dow}`),
  fc.integer({ min: 1, max: 30 }).map((n) => `*/${n} * * * *`),
);
const headerName = fc
  .stringMatching(new RegExp(HEADER_NAME_PATTERN))
  .filter(
    (h) =>
      !/^(x-cron-|idempotency-key$|traceparent$|connection$|content-length$|expect$|keep-alive$|proxy-connection$|te$|trailer$|transfer-encoding$|upgrade$)/i.test(
        h,
      ),
  );
const headerValueRe = new RegExp(HEADER_VALUE_PATTERN);
const headerValue = fc.string({ maxLength: 20 }).filter((v) => headerValueRe.test(v));
const headers = fc
  .uniqueArray(fc.tuple(headerName, headerValue), {
    maxLength: 4,
    selector: ([h]) => h.toLowerCase(),
  })
  .map((entries) => {
    const out: Record<string, Json> = {};
    for (const [k, v] of entries)
      Object.defineProperty(out, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  });
const url = fc.webUrl({ withQueryParameters: true, withFragments: true });
const int = (min: number, max: number) => fc.integer({ min, max });

const policy = fc
  .record(
    {
      concurrency: fc.constantFrom('Allow', 'Forbid', 'Replace', 'Enqueue'),
      concurrency_scope: fc.constantFrom('host', 'global'),
      timeout_seconds: int(1, 600),
      retries: fc.record(
        { max_attempts: int(1, 10), min_seconds: int(0, 60), max_seconds: int(60, 100_000) },
        { requiredKeys: [] },
      ),
      max_concurrent: int(1, 1024),
      queue_max: int(0, 10_000),
      catchup: fc.record(
        {
          mode: fc.constantFrom('none', 'latest', 'all'),
          window_seconds: int(0, 1e9),
          max_runs: int(1, 1000),
        },
        { requiredKeys: [] },
      ),
      jitter: fc.record(
        { stable_seconds: int(0, 3600), random_seconds: int(0, 3600) },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  )
  .map((p) => {
    // Drop the combinations the cross-field rules forbid.
    const out: Record<string, unknown> = { ...p };
    if (p.concurrency === 'Allow') delete out['max_concurrent'];
    if (p.concurrency !== 'Enqueue') delete out['queue_max'];
    if (p.catchup !== undefined && p.catchup.mode !== 'all') {
      const { max_runs: _dropped, ...rest } = p.catchup;
      out['catchup'] = rest;
    }
    return out as Json;
  });

const job = fc
  .record(
    {
      name,
      schedules: fc.uniqueArray(schedule, { minLength: 1, maxLength: 4 }),
      single: fc.boolean(),
      timezone: fc.constantFrom(
        'UTC',
        'Europe/Berlin',
        'America/Santiago',
        'Australia/Lord_Howe',
        'Asia/Kolkata',
      ),
      request: fc.record(
        {
          method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
          url,
          headers,
          body: fc.string({ maxLength: 30 }),
        },
        { requiredKeys: ['url'] },
      ),
      policy,
      auth: fc.record(
        {
          secret_refs: fc.array(fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_:./-]{0,20}$/), {
            minLength: 1,
            maxLength: 8,
          }),
        },
        { requiredKeys: [] },
      ),
      enabled: fc.boolean(),
    },
    { requiredKeys: ['name', 'schedules', 'single', 'request'] },
  )
  .map(({ single, schedules, ...rest }) => {
    const out: Record<string, Json> = { ...(rest as Record<string, Json>) };
    if (single) out['schedule'] = schedules[0] ?? '@daily';
    else out['schedules'] = schedules;
    return out as Json;
  });

const validManifest = fc.record({
  version: fc.constant(1),
  app: name,
  jobs: fc.uniqueArray(job, {
    minLength: 1,
    maxLength: 5,
    selector: (j) => (j as { name: string }).name,
  }),
});

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
    const replacement = fc.oneof(
      fc.jsonValue(),
      fc.constantFrom<Json>(null, -1, 0, 1e308, '', 'Allow', []),
      fc.anything(),
    );
    fc.assert(
      fc.property(
        validManifest,
        fc.array(fc.tuple(fc.nat(), fc.boolean(), replacement), { minLength: 1, maxLength: 4 }),
        (m, edits) => {
          const raw = JSON.parse(JSON.stringify(m)) as Json;
          for (const [pick, remove, value] of edits) {
            const targets = containers(raw);
            const target = targets[pick % targets.length];
            if (target === undefined) continue;
            const [container, key] = target;
            if (remove && !Array.isArray(container)) delete container[key];
            else (container as Record<string, unknown>)[key] = value;
          }
          expectSaneErrors(raw);
        },
      ),
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

/** Every (container, key) pair inside a JSON value, for mutation. */
function containers(value: Json): [Record<string, Json> | Json[], string][] {
  const out: [Record<string, Json> | Json[], string][] = [];
  const visit = (node: Json): void => {
    if (node === null || typeof node !== 'object') return;
    for (const key of Object.keys(node)) {
      out.push([node, key]);
      visit((node as Record<string, Json>)[key] as Json);
    }
  };
  visit(value);
  return out;
}
