/**
 * fast-check arbitraries of manifests shared by the contract's property tests
 * and the shim's spec fuzzing: random valid manifests (every field, extension
 * fields, zones with odd DST) and random damage to them.
 */
import fc from 'fast-check';
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from '../../src/contract/manifest/index.js';
import type { Json } from './manifest-fixtures.js';

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

const envName = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/)
  .filter((n) => !n.toUpperCase().startsWith('CRONIX_'));
const noNul = fc.string({ maxLength: 20 }).filter((v) => !v.includes('\u0000'));
const envMap = (value: fc.Arbitrary<string>) =>
  fc
    .uniqueArray(fc.tuple(envName, value), { maxLength: 4, selector: ([k]) => k })
    .map((entries) => {
      const out: Record<string, Json> = {};
      for (const [k, v] of entries) out[k] = v;
      return out;
    });

/** A valid `command` (SPEC §11): exit codes split into disjoint success and reject lists. */
const command = fc
  .record(
    {
      argv: fc.tuple(
        noNul.filter((a) => a !== ''),
        fc.array(noNul, { maxLength: 4 }),
      ),
      env: envMap(noNul),
      env_from_secrets: envMap(fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_:./-]{0,20}$/)),
      cwd: noNul.map((d) => `/${d}`),
      graceful_stop_seconds: int(0, 3600),
      max_output_bytes: int(0, 1024 * 1024 * 1024),
      codes: fc.uniqueArray(int(0, 255), { minLength: 1, maxLength: 6 }),
      split: int(1, 6),
    },
    { requiredKeys: ['argv', 'codes', 'split'] },
  )
  .map(({ argv, codes, split, env, env_from_secrets, ...rest }) => {
    const out: Record<string, Json> = { ...(rest as Record<string, Json>) };
    out['argv'] = [argv[0], ...argv[1]];
    if (env !== undefined) out['env'] = env;
    // a variable is in one of the two maps
    if (env_from_secrets !== undefined)
      out['env_from_secrets'] = Object.fromEntries(
        Object.entries(env_from_secrets).filter(([k]) => env === undefined || !(k in env)),
      );
    const success = split % 2 === 0 ? codes.slice(0, Math.max(1, split / 2)) : [0];
    if (split % 2 === 0) out['success_exit_codes'] = success;
    if (split % 3 === 0)
      out['reject_exit_codes'] = codes
        .slice(Math.max(1, split / 2))
        .filter((c) => !success.includes(c));
    return out as Json;
  });

/** One valid job (as a user writes it: `schedule` or `schedules`, defaults optional). */
export const job = fc
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
      command,
      isCommand: fc.boolean(),
    },
    { requiredKeys: ['name', 'schedules', 'single', 'request', 'command', 'isCommand'] },
  )
  .map(({ single, schedules, isCommand, request, command, ...rest }) => {
    const out: Record<string, Json> = { ...(rest as Record<string, Json>) };
    // exactly one of request and command
    if (isCommand) out['command'] = command;
    else out['request'] = request as Json;
    if (single) out['schedule'] = schedules[0] ?? '@daily';
    else out['schedules'] = schedules;
    return out as Json;
  });

/** A valid manifest of 1..5 jobs. */
export const validManifest = fc.record({
  version: fc.constant(1),
  app: name,
  jobs: fc.uniqueArray(job, {
    minLength: 1,
    maxLength: 5,
    selector: (j) => (j as { name: string }).name,
  }),
});

/** Values that damage a field: any JSON, edge values, anything at all. */
export const replacement = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom<Json>(null, -1, 0, 1e308, '', 'Allow', []),
  fc.anything(),
);

/** 1..4 edits: which (container, key) to hit, delete or replace, and with what. */
export const mutation = fc.array(fc.tuple(fc.nat(), fc.boolean(), replacement), {
  minLength: 1,
  maxLength: 4,
});

/** Applies `edits` from {@link mutation} to `raw` in place. */
export function applyMutation(raw: Json, edits: readonly [number, boolean, unknown][]): void {
  for (const [pick, remove, value] of edits) {
    const targets = containers(raw);
    const target = targets[pick % targets.length];
    if (target === undefined) continue;
    const [container, key] = target;
    if (remove && !Array.isArray(container)) delete container[key];
    else (container as Record<string, unknown>)[key] = value;
  }
}

/** Every (container, key) pair inside a JSON value, for mutation. */
export function containers(value: Json): [Record<string, Json> | Json[], string][] {
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
