/**
 * Table tests of the semantic rules (beyond the JSON structure), of error reporting (all at
 * once, sorted, de-duplicated, paths escaped) and of what messages say.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ERRORS, parseManifest } from '../../src/contract/manifest/index.js';
import {
  baseManifest,
  expectInvalid,
  expectValid,
  manifestWith,
  type Json,
} from './manifest-fixtures.js';

const J = 'jobs/0';
const R = `${J}/request`;
const P = `${J}/policy`;

interface Row {
  title: string;
  changes: Record<string, Json | undefined>;
  /** Expected error path, or null for a valid manifest. */
  path: string | null;
  message?: string[];
}

const rows: Row[] = [
  // schedule / schedules
  {
    title: 'neither schedule nor schedules',
    changes: { [`${J}/schedule`]: undefined },
    path: J,
    message: ['exactly one of', 'found neither'],
  },
  {
    title: 'both schedule and schedules',
    changes: { [`${J}/schedules`]: ['@daily'] },
    path: J,
    message: ['found both'],
  },
  {
    title: 'malformed cron',
    changes: { [`${J}/schedule`]: 'not a cron' },
    path: `${J}/schedule`,
    message: ['invalid schedule', 'not a cron'],
  },
  {
    title: '6 fields (seconds first)',
    changes: { [`${J}/schedule`]: '*/10 0 * * * *' },
    path: null,
  },
  {
    title: '7 fields',
    changes: { [`${J}/schedule`]: '0 0 0 * * * *' },
    path: `${J}/schedule`,
    message: ['expected 5 fields', 'or 6', 'found 7'],
  },
  {
    title: 'bad seconds field',
    changes: { [`${J}/schedule`]: '61 0 * * * *' },
    path: `${J}/schedule`,
    message: ['second value 61 is out of range 0-59'],
  },
  {
    title: 'step larger than the minute range',
    changes: { [`${J}/schedule`]: '*/61 * * * *' },
    path: `${J}/schedule`,
    message: ['minute step "/61" is larger than the field\'s range 0-59'],
  },
  {
    title: 'step larger than the hour range',
    changes: { [`${J}/schedule`]: '0 */25 * * *' },
    path: `${J}/schedule`,
    message: ['hour step "/25"'],
  },
  {
    title: 'never fires',
    changes: { [`${J}/schedule`]: '0 0 30 2 *' },
    path: `${J}/schedule`,
    message: ['never fire'],
  },
  {
    title: '@every 0 s',
    changes: { [`${J}/schedule`]: '@every 0s' },
    path: `${J}/schedule`,
    message: ['at least 1s, found 0s'],
  },
  { title: '@every 1 s', changes: { [`${J}/schedule`]: '@every 1s' }, path: null },
  { title: '@every 30 s', changes: { [`${J}/schedule`]: '@every 30s' }, path: null },
  { title: '@every 60 s', changes: { [`${J}/schedule`]: '@every 60s' }, path: null },
  {
    title: 'bad entry of schedules',
    changes: { [`${J}/schedule`]: undefined, [`${J}/schedules`]: ['@daily', '61 * * * *'] },
    path: `${J}/schedules/1`,
  },
  {
    title: 'duplicate entry of schedules',
    changes: { [`${J}/schedule`]: undefined, [`${J}/schedules`]: ['@daily', '@hourly', ' @daily'] },
    path: `${J}/schedules/2`,
    message: ['duplicate schedule', 'schedules/0'],
  },
  // time zone
  {
    title: 'unknown zone',
    changes: { [`${J}/timezone`]: 'Mars/Olympus' },
    path: `${J}/timezone`,
    message: ['Mars/Olympus'],
  },
  { title: 'empty zone', changes: { [`${J}/timezone`]: '' }, path: `${J}/timezone` },
  {
    title: 'zone with midnight DST',
    changes: { [`${J}/timezone`]: 'America/Santiago' },
    path: null,
  },
  // URL
  {
    title: 'ftp URL',
    changes: { [`${R}/url`]: 'ftp://x.example.com' },
    path: `${R}/url`,
    message: ['http:// or https://', 'ftp:'],
  },
  {
    title: 'relative URL',
    changes: { [`${R}/url`]: '/cron/a' },
    path: `${R}/url`,
    message: ['found "/cron/a"'],
  },
  { title: 'not a URL', changes: { [`${R}/url`]: 'https://' }, path: `${R}/url` },
  { title: 'file URL', changes: { [`${R}/url`]: 'file:///etc/passwd' }, path: `${R}/url` },
  { title: 'mailto URL', changes: { [`${R}/url`]: 'mailto:ops@example.com' }, path: `${R}/url` },
  {
    title: 'user and password',
    changes: { [`${R}/url`]: 'https://bob:hunter2@x.example.com/a' },
    path: `${R}/url`,
    message: ['user name or password', '***@x.example.com'],
  },
  {
    title: 'user only',
    changes: { [`${R}/url`]: 'https://bob@x.example.com/a' },
    path: `${R}/url`,
  },
  {
    title: 'space in URL',
    changes: { [`${R}/url`]: 'https://x.example.com/a b' },
    path: `${R}/url`,
    message: ['percent-encode'],
  },
  {
    title: 'trailing newline',
    changes: { [`${R}/url`]: 'https://x.example.com/\n' },
    path: `${R}/url`,
  },
  {
    title: 'http with port, query, fragment',
    changes: { [`${R}/url`]: 'http://127.0.0.1:8080/a?b=c@d#e' },
    path: null,
  },
  { title: 'IPv6 host', changes: { [`${R}/url`]: 'https://[::1]:8443/cron' }, path: null },
  { title: 'upper-case scheme', changes: { [`${R}/url`]: 'HTTPS://x.example.com/' }, path: null },
  // headers
  {
    title: 'X-Cron-Run-Id',
    changes: { [`${R}/headers/X-Cron-Run-Id`]: '1' },
    path: `${R}/headers/X-Cron-Run-Id`,
    message: ['cannot be overridden'],
  },
  {
    title: 'lower-case x-cron- prefix',
    changes: { [`${R}/headers/x-cron-anything`]: '1' },
    path: `${R}/headers/x-cron-anything`,
  },
  {
    title: 'Idempotency-Key any case',
    changes: { [`${R}/headers/IDEMPOTENCY-KEY`]: '1' },
    path: `${R}/headers/IDEMPOTENCY-KEY`,
  },
  {
    title: 'traceparent',
    changes: { [`${R}/headers/Traceparent`]: '00-x' },
    path: `${R}/headers/Traceparent`,
  },
  {
    title: 'Content-Length',
    changes: { [`${R}/headers/Content-Length`]: '3' },
    path: `${R}/headers/Content-Length`,
    message: ['HTTP client'],
  },
  {
    title: 'Transfer-Encoding',
    changes: { [`${R}/headers/transfer-encoding`]: 'chunked' },
    path: `${R}/headers/transfer-encoding`,
  },
  {
    title: 'X-Cron without dash is allowed',
    changes: { [`${R}/headers/X-Cronix`]: '1' },
    path: null,
  },
  {
    title: 'Host and tracestate are allowed',
    changes: { [`${R}/headers/Host`]: 'a', [`${R}/headers/tracestate`]: 'b' },
    path: null,
  },
  {
    title: 'case-insensitive duplicate',
    changes: { [`${R}/headers/Accept`]: 'a', [`${R}/headers/accept`]: 'b' },
    path: `${R}/headers/accept`,
    message: ['duplicate header', '"Accept"'],
  },
  {
    title: '__proto__ is an ordinary header name',
    changes: { [`${R}/headers/__proto__`]: 'x' },
    path: null,
  },
  // retries
  {
    title: 'min > max',
    changes: { [`${P}/retries/min_seconds`]: 30, [`${P}/retries/max_seconds`]: 10 },
    path: `${P}/retries`,
    message: ['min_seconds 30', 'max_seconds 10'],
  },
  {
    title: 'min > default max',
    changes: { [`${P}/retries/min_seconds`]: 61 },
    path: `${P}/retries`,
    message: ['60 (the default)'],
  },
  {
    title: 'default min > max',
    changes: { [`${P}/retries/max_seconds`]: 1, [`${P}/retries/min_seconds`]: undefined },
    path: null,
  },
  {
    title: 'min = max',
    changes: { [`${P}/retries/min_seconds`]: 5, [`${P}/retries/max_seconds`]: 5 },
    path: null,
  },
  // extension cross-field rules
  {
    title: 'max_concurrent with Allow',
    changes: { [`${P}/concurrency`]: 'Allow', [`${P}/max_concurrent`]: 2 },
    path: `${P}/max_concurrent`,
    message: ['"Allow"'],
  },
  { title: 'max_concurrent with Forbid', changes: { [`${P}/max_concurrent`]: 2 }, path: null },
  {
    title: 'max_concurrent with Replace',
    changes: { [`${P}/concurrency`]: 'Replace', [`${P}/max_concurrent`]: 2 },
    path: null,
  },
  {
    title: 'queue_max with default Forbid',
    changes: { [`${P}/queue_max`]: 5 },
    path: `${P}/queue_max`,
    message: ['"Enqueue"', '"Forbid" (the default)'],
  },
  {
    title: 'queue_max with Replace',
    changes: { [`${P}/concurrency`]: 'Replace', [`${P}/queue_max`]: 5 },
    path: `${P}/queue_max`,
  },
  {
    title: 'queue_max with Enqueue',
    changes: { [`${P}/concurrency`]: 'Enqueue', [`${P}/queue_max`]: 5 },
    path: null,
  },
  {
    title: 'max_runs with default mode',
    changes: { [`${P}/catchup/max_runs`]: 5 },
    path: `${P}/catchup/max_runs`,
    message: ['"all"', '"latest" (the default)'],
  },
  {
    title: 'max_runs with mode none',
    changes: { [`${P}/catchup/mode`]: 'none', [`${P}/catchup/max_runs`]: 5 },
    path: `${P}/catchup/max_runs`,
  },
  {
    title: 'max_runs with mode all',
    changes: { [`${P}/catchup/mode`]: 'all', [`${P}/catchup/max_runs`]: 5 },
    path: null,
  },
];

describe('manifest semantic rules', () => {
  it.each(rows.map((row) => [row.title, row] as const))('%s', (_title, row) => {
    const input = manifestWith(row.changes);
    if (row.path === null) {
      expectValid(input);
      return;
    }
    const errors = expectInvalid(input);
    const atPath = errors.filter((e) => e.path === row.path);
    expect(atPath, JSON.stringify(errors)).not.toHaveLength(0);
    for (const fragment of row.message ?? [])
      expect(atPath.map((e) => e.message).join('\n')).toContain(fragment);
  });

  it('reports a duplicate job name at the later job, naming the first', () => {
    const m = baseManifest();
    const job = (m['jobs'] as Json[])[0] as Json;
    m['jobs'] = [
      job,
      { name: 'b', schedule: '@daily', request: { url: 'https://x.example.com' } },
      job,
    ];
    const errors = expectInvalid(m);
    expect(errors).toEqual([
      { path: 'jobs/2/name', message: 'duplicate job name "a": jobs/0 already uses it' },
    ]);
  });

  it('never echoes URL credentials or header values', () => {
    const errors = expectInvalid(
      manifestWith({
        [`${R}/url`]: 'https://bob:hunter2@x.example.com',
        [`${R}/headers/Authorization`]: 'Bearer s3cr3t\n',
      }),
    );
    const text = JSON.stringify(errors);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('s3cr3t');
    expect(errors.map((e) => e.path)).toEqual([`${R}/headers/Authorization`, `${R}/url`]);
  });

  it('reports every problem at once, each once, sorted by path', () => {
    const input = manifestWith({
      app: 'Billing',
      [`${J}/name`]: 'BadName',
      [`${J}/schedule`]: '0 0 30 2 *',
      [`${P}/timeout_seconds`]: 601,
      [`${P}/retries/min_seconds`]: 90,
    });
    const errors = expectInvalid(input);
    expect(errors.map((e) => e.path)).toEqual([
      'app',
      `${J}/name`,
      `${P}/retries`,
      `${P}/timeout_seconds`,
      `${J}/schedule`,
    ]);
  });

  it('reports errors of several jobs and of every bad header name', () => {
    const input = baseManifest();
    input['jobs'] = [
      {
        name: 'a',
        schedule: '@hourly',
        request: { url: 'ftp://x', headers: { 'a b': 'x', 'c d': 'y\n', ok: 'z' } },
      },
      { name: 'a', schedules: [], request: { url: 'https://x' }, extra: true },
    ];
    const errors = expectInvalid(input);
    expect(errors.map((e) => e.path)).toEqual([
      'jobs/0/request/headers/a b',
      'jobs/0/request/headers/c d',
      'jobs/0/request/headers/c d',
      'jobs/0/request/url',
      'jobs/1/extra',
      'jobs/1/name',
      'jobs/1/schedules',
    ]);
  });

  it('escapes "/" and "~" inside path segments (RFC 6901)', () => {
    const errors = expectInvalid(manifestWith({ [`${R}/headers`]: { 'a/b~c': 'v' } }));
    expect(errors.map((e) => e.path)).toEqual([`${R}/headers/a~1b~0c`]);
  });

  it('caps the list of errors and says so', () => {
    const input = baseManifest();
    for (let i = 0; i < 500; i++) input[`unknown-${i}`] = i;
    const errors = expectInvalid(input);
    expect(errors).toHaveLength(MAX_ERRORS + 1);
    expect(errors.at(-1)).toEqual({
      path: '',
      message: expect.stringContaining('too many errors'),
    });
  });

  it('says what was expected and what was found', () => {
    const errors = expectInvalid(
      manifestWith({ app: 'Billing', [`${P}/timeout_seconds`]: 601, [`${J}/foo`]: 1 }),
    );
    expect(errors).toEqual([
      {
        path: 'app',
        message:
          'expected a name of lowercase letters, digits and \'-\', starting with a letter, at most 63 characters, found "Billing"; did you mean "billing"?',
      },
      {
        path: `${J}/foo`,
        message:
          'unknown field "foo" (allowed: name, schedule, schedules, timezone, request, command, policy, auth, enabled, description, notify, manual)',
      },
      {
        path: `${P}/timeout_seconds`,
        message:
          'expected an integer from 1 to 600 for an HTTP job (only command jobs may run up to 86400), found 601',
      },
    ]);
  });

  it('turns an exception inside validation into an error value', () => {
    const hostile = manifestWith({});
    Object.defineProperty(hostile, 'app', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const result = parseManifest(hostile);
    expect(result).toEqual({
      ok: false,
      errors: [{ path: '', message: 'could not validate the manifest: boom' }],
    });
  });
});
