/**
 * Table tests of every structural rule of the manifest (SPEC §2, §8): each field's bounds on
 * both sides, patterns, enumerations, types, and unknown fields at every level.
 */
import { describe, expect, it } from 'vitest';
import {
  expectInvalid,
  expectValid,
  jobNames,
  manifestWith,
  type Json,
} from './manifest-fixtures.js';

/** One row: set `path` to `value` (plus `also`), expect validity or an error at `path`. */
interface Row {
  path: string;
  value: Json | undefined;
  ok: boolean;
  also?: Record<string, Json | undefined>;
  /** Fragments the error message must contain. */
  message?: string[];
}

const J = 'jobs/0';
const P = `${J}/policy`;
const name63 = `a${'b'.repeat(62)}`;

const rows: Row[] = [
  // version
  { path: 'version', value: 1, ok: true },
  { path: 'version', value: 2, ok: false, message: ['expected the number 1', 'found 2'] },
  { path: 'version', value: '1', ok: false, message: ['found "1"'] },
  { path: 'version', value: null, ok: false, message: ['found null'] },
  { path: 'version', value: undefined, ok: false, message: ['required field is missing'] },
  // app
  { path: 'app', value: 'a', ok: true },
  { path: 'app', value: name63, ok: true },
  { path: 'app', value: `${name63}c`, ok: false },
  { path: 'app', value: 'a-1-', ok: true },
  {
    path: 'app',
    value: 'Billing',
    ok: false,
    message: ["a name of lowercase letters, digits and '-'", 'found "Billing"', '"billing"?'],
  },
  { path: 'app', value: '1app', ok: false },
  { path: 'app', value: 'my_app', ok: false },
  { path: 'app', value: '', ok: false },
  { path: 'app', value: 7, ok: false, message: ['found 7'] },
  { path: 'app', value: undefined, ok: false, message: ['required field is missing'] },
  // jobs
  { path: 'jobs', value: [], ok: false, message: ['1 to 256', 'found an empty array'] },
  { path: 'jobs', value: {}, ok: false, message: ['expected an array', 'found an object'] },
  { path: 'jobs', value: undefined, ok: false, message: ['required field is missing'] },
  { path: 'jobs/0', value: 'job', ok: false, message: ['expected an object'] },
  // jobs[].name
  { path: `${J}/name`, value: name63, ok: true },
  { path: `${J}/name`, value: `${name63}c`, ok: false },
  { path: `${J}/name`, value: 'MyJob', ok: false },
  { path: `${J}/name`, value: '-a', ok: false },
  { path: `${J}/name`, value: undefined, ok: false, message: ['required field is missing'] },
  // schedules
  { path: `${J}/schedule`, value: 5, ok: false, message: ['expected a string', 'found 5'] },
  {
    path: `${J}/schedules`,
    value: [],
    ok: false,
    also: { [`${J}/schedule`]: undefined },
    message: ['1 to 64'],
  },
  {
    path: `${J}/schedules/0`,
    value: 5,
    ok: false,
    also: { [`${J}/schedule`]: undefined, [`${J}/schedules`]: [] },
  },
  // timezone
  { path: `${J}/timezone`, value: 'Europe/Paris', ok: true },
  { path: `${J}/timezone`, value: 3, ok: false, message: ['expected a string'] },
  // request
  // (no request and no command: test/contract/manifest-command.test.ts)
  {
    path: `${J}/request`,
    value: [],
    ok: false,
    message: ['expected an object', 'found an empty array'],
  },
  { path: `${J}/request/url`, value: undefined, ok: false, message: ['required field is missing'] },
  { path: `${J}/request/url`, value: 42, ok: false },
  ...['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m): Row => ({
    path: `${J}/request/method`,
    value: m,
    ok: true,
  })),
  {
    path: `${J}/request/method`,
    value: 'get',
    ok: false,
    message: ['"GET", "POST"', 'found "get"'],
  },
  { path: `${J}/request/method`, value: 'TRACE', ok: false },
  { path: `${J}/request/headers`, value: {}, ok: true },
  { path: `${J}/request/headers`, value: [], ok: false, message: ['expected an object'] },
  { path: `${J}/request/headers/X-Ok`, value: 'v', ok: true },
  { path: `${J}/request/headers/X-Num`, value: 5, ok: false, message: ['found 5'] },
  {
    path: `${J}/request/headers/a b`,
    value: 'v',
    ok: false,
    message: ['HTTP token', 'found "a b"'],
  },
  { path: `${J}/request/headers/a:b`, value: 'v', ok: false },
  { path: `${J}/request/headers/`, value: 'v', ok: false },
  {
    path: `${J}/request/headers/X-V`,
    value: 'a\r\nb',
    ok: false,
    message: ['without CR, LF or NUL', 'CR'],
  },
  { path: `${J}/request/headers/X-V`, value: 'a\nb', ok: false, message: ['LF'] },
  { path: `${J}/request/headers/X-V`, value: 'a\u0000b', ok: false, message: ['NUL'] },
  { path: `${J}/request/headers/X-V`, value: 'tab\there ünïcode', ok: true },
  { path: `${J}/request/body`, value: '{"a":1}', ok: true },
  {
    path: `${J}/request/body`,
    value: { a: 1 },
    ok: false,
    message: ['expected a string', 'found an object'],
  },
  // policy
  { path: P, value: {}, ok: true },
  { path: P, value: 'Forbid', ok: false },
  ...['Allow', 'Forbid', 'Replace', 'Enqueue'].map((c): Row => ({
    path: `${P}/concurrency`,
    value: c,
    ok: true,
  })),
  { path: `${P}/concurrency`, value: 'forbid', ok: false },
  { path: `${P}/concurrency_scope`, value: 'host', ok: true },
  { path: `${P}/concurrency_scope`, value: 'global', ok: true },
  { path: `${P}/concurrency_scope`, value: 'cluster', ok: false, message: ['"host", "global"'] },
  { path: `${P}/timeout_seconds`, value: 1, ok: true },
  { path: `${P}/timeout_seconds`, value: 600, ok: true },
  {
    path: `${P}/timeout_seconds`,
    value: 0,
    ok: false,
    message: ['an integer from 1 to 86400', 'found 0'],
  },
  {
    path: `${P}/timeout_seconds`,
    value: 601,
    ok: false,
    message: ['an integer from 1 to 600 for an HTTP job', 'found 601'],
  },
  { path: `${P}/timeout_seconds`, value: 1.5, ok: false, message: ['found 1.5'] },
  { path: `${P}/timeout_seconds`, value: 1e300, ok: false, message: ['found 1e+300'] },
  { path: `${P}/timeout_seconds`, value: '60', ok: false, message: ['found "60"'] },
  { path: `${P}/retries`, value: [], ok: false },
  { path: `${P}/retries/max_attempts`, value: 1, ok: true },
  { path: `${P}/retries/max_attempts`, value: 10, ok: true },
  { path: `${P}/retries/max_attempts`, value: 0, ok: false, message: ['from 1 to 10'] },
  { path: `${P}/retries/max_attempts`, value: 11, ok: false },
  { path: `${P}/retries/min_seconds`, value: 0, ok: true },
  { path: `${P}/retries/min_seconds`, value: 60, ok: true },
  {
    path: `${P}/retries/min_seconds`,
    value: -1,
    ok: false,
    message: ['an integer of at least 0', 'found -1'],
  },
  { path: `${P}/retries/min_seconds`, value: 0.5, ok: false },
  { path: `${P}/retries/max_seconds`, value: 1, ok: true },
  { path: `${P}/retries/max_seconds`, value: 86400, ok: true },
  {
    path: `${P}/retries/max_seconds`,
    value: 0,
    ok: false,
    also: { [`${P}/retries/min_seconds`]: 0 },
  },
  // extension fields
  { path: `${P}/max_concurrent`, value: 1, ok: true },
  { path: `${P}/max_concurrent`, value: 1024, ok: true },
  { path: `${P}/max_concurrent`, value: 0, ok: false, message: ['from 1 to 1024'] },
  { path: `${P}/max_concurrent`, value: 1025, ok: false },
  { path: `${P}/queue_max`, value: 0, ok: true, also: { [`${P}/concurrency`]: 'Enqueue' } },
  { path: `${P}/queue_max`, value: 10000, ok: true, also: { [`${P}/concurrency`]: 'Enqueue' } },
  { path: `${P}/queue_max`, value: -1, ok: false, also: { [`${P}/concurrency`]: 'Enqueue' } },
  { path: `${P}/queue_max`, value: 10001, ok: false, also: { [`${P}/concurrency`]: 'Enqueue' } },
  { path: `${P}/catchup`, value: {}, ok: true },
  { path: `${P}/catchup`, value: 'latest', ok: false },
  ...['none', 'latest', 'all'].map((m): Row => ({ path: `${P}/catchup/mode`, value: m, ok: true })),
  { path: `${P}/catchup/mode`, value: 'some', ok: false, message: ['"none", "latest", "all"'] },
  { path: `${P}/catchup/window_seconds`, value: 0, ok: true },
  { path: `${P}/catchup/window_seconds`, value: 31_536_000, ok: true },
  { path: `${P}/catchup/window_seconds`, value: -1, ok: false },
  { path: `${P}/catchup/window_seconds`, value: null, ok: false, message: ['found null'] },
  { path: `${P}/catchup/max_runs`, value: 1, ok: true, also: { [`${P}/catchup/mode`]: 'all' } },
  { path: `${P}/catchup/max_runs`, value: 1000, ok: true, also: { [`${P}/catchup/mode`]: 'all' } },
  { path: `${P}/catchup/max_runs`, value: 0, ok: false, also: { [`${P}/catchup/mode`]: 'all' } },
  { path: `${P}/catchup/max_runs`, value: 1001, ok: false, also: { [`${P}/catchup/mode`]: 'all' } },
  { path: `${P}/jitter`, value: {}, ok: true },
  { path: `${P}/jitter/stable_seconds`, value: 0, ok: true },
  { path: `${P}/jitter/stable_seconds`, value: 3600, ok: true },
  { path: `${P}/jitter/stable_seconds`, value: -1, ok: false },
  { path: `${P}/jitter/stable_seconds`, value: 3601, ok: false, message: ['from 0 to 3600'] },
  { path: `${P}/jitter/random_seconds`, value: 0, ok: true },
  { path: `${P}/jitter/random_seconds`, value: 3600, ok: true },
  { path: `${P}/jitter/random_seconds`, value: -1, ok: false },
  { path: `${P}/jitter/random_seconds`, value: 3601, ok: false },
  { path: `${J}/enabled`, value: true, ok: true },
  { path: `${J}/enabled`, value: false, ok: true },
  { path: `${J}/enabled`, value: 'yes', ok: false, message: ['a boolean', 'found "yes"'] },
  // auth
  { path: `${J}/auth`, value: {}, ok: true },
  { path: `${J}/auth/secret_refs`, value: ['CRON_SECRET'], ok: true },
  {
    path: `${J}/auth/secret_refs`,
    value: ['env:A', 'file:/run/secrets/b', 'raw:x.y-z_1'],
    ok: true,
  },
  { path: `${J}/auth/secret_refs`, value: Array.from({ length: 8 }, (_, i) => `S${i}`), ok: true },
  {
    path: `${J}/auth/secret_refs`,
    value: Array.from({ length: 9 }, (_, i) => `S${i}`),
    ok: false,
    message: ['at most 8 entries', 'found an array of 9 entries'],
  },
  // SPEC says 1..8; an empty list is accepted as "none" so canonical forms parse again (docs/manifest.md).
  { path: `${J}/auth/secret_refs`, value: [], ok: true },
  { path: `${J}/auth/secret_refs`, value: [`a${'b'.repeat(127)}`], ok: true },
  {
    path: `${J}/auth/secret_refs/0`,
    value: `a${'b'.repeat(128)}`,
    ok: false,
    also: { [`${J}/auth/secret_refs`]: [] },
  },
  {
    path: `${J}/auth/secret_refs/0`,
    value: '1abc',
    ok: false,
    also: { [`${J}/auth/secret_refs`]: [] },
  },
  {
    path: `${J}/auth/secret_refs/0`,
    value: 'a b',
    ok: false,
    also: { [`${J}/auth/secret_refs`]: [] },
  },
  // unknown fields at every level
  ...[
    '',
    `${J}/`,
    `${J}/request/`,
    `${P}/`,
    `${P}/retries/`,
    `${P}/catchup/`,
    `${P}/jitter/`,
    `${J}/auth/`,
  ].map((prefix): Row => ({
    path: `${prefix}foo`,
    value: 1,
    ok: false,
    message: ['unknown field "foo"'],
  })),
  {
    path: `${P}/timeout`,
    value: 5,
    ok: false,
    message: ['unknown field "timeout"', 'did you mean "timeout_seconds"'],
  },
  { path: '__proto__', value: { version: 2 }, ok: false, message: ['unknown field "__proto__"'] },
];

function label(row: Row): string {
  const shown = row.value === undefined ? '(absent)' : JSON.stringify(row.value).slice(0, 40);
  return `${row.path} = ${shown} → ${row.ok ? 'valid' : 'error'}`;
}

describe('manifest structural rules', () => {
  it.each(rows.map((row) => [label(row), row] as const))('%s', (_label, row) => {
    const input = manifestWith({ ...row.also, [row.path]: row.value });
    if (row.ok) {
      expectValid(input);
      return;
    }
    const errors = expectInvalid(input);
    const escaped = row.path.replace(/~/g, '~0');
    const atPath = errors.filter((e) => e.path === escaped);
    expect(atPath, JSON.stringify(errors)).not.toHaveLength(0);
    for (const fragment of row.message ?? []) {
      expect(atPath.map((e) => e.message).join('\n')).toContain(fragment);
    }
    for (const error of errors) expect(error.message).not.toBe('');
  });

  it('accepts 256 jobs and rejects 257', () => {
    const job = (name: string): Json => ({
      name,
      schedule: '@daily',
      request: { url: 'https://x.example.com' },
    });
    expectValid({ version: 1, app: 'app', jobs: jobNames(256).map(job) });
    const errors = expectInvalid({ version: 1, app: 'app', jobs: jobNames(257).map(job) });
    expect(errors).toEqual([
      {
        path: 'jobs',
        message: 'expected an array of 1 to 256 entries, found an array of 257 entries',
      },
    ]);
  });

  it('accepts 64 schedules and rejects 65', () => {
    const schedules = (n: number): Json =>
      Array.from({ length: n }, (_, i) => `${i % 60} ${Math.floor(i / 60)} * * *`);
    expectValid(manifestWith({ [`${J}/schedule`]: undefined, [`${J}/schedules`]: schedules(64) }));
    const errors = expectInvalid(
      manifestWith({ [`${J}/schedule`]: undefined, [`${J}/schedules`]: schedules(65) }),
    );
    expect(errors.map((e) => e.path)).toEqual([`${J}/schedules`]);
  });

  it('rejects non-object roots with one error at the root', () => {
    for (const raw of [null, undefined, 1, 'manifest', [], true, Number.NaN]) {
      const errors = expectInvalid(raw);
      expect(errors).toHaveLength(1);
      expect(errors[0]?.path).toBe('');
      expect(errors[0]?.message).toMatch(/^expected an object, found /);
    }
  });
});
