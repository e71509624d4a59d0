import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cronix } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cronix-cli-'));
function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const valid = {
  version: 1,
  app: 'billing',
  jobs: [
    {
      name: 'settle',
      schedule: '*/10 * * * *',
      request: { url: 'https://billing.internal/settle' },
    },
  ],
};

describe('cronix validate', () => {
  it('exits 0 for a valid manifest, in both output forms', () => {
    const path = file('valid.json', valid);
    const human = cronix(['validate', path]);
    expect(human.status).toBe(0);
    expect(human.stdout).toContain('valid (app billing, 1 job, 1 schedule)');
    const json = cronix(['validate', path, '-o', 'json']);
    expect(json.status).toBe(0);
    const warning = {
      job: 'settle',
      message: expect.stringContaining('auth.secret_refs is empty') as unknown,
    };
    expect(JSON.parse(json.stdout)).toEqual({ valid: true, errors: [], warnings: [warning] });
    expect(human.stderr).toMatch(
      /^warning: job settle: auth.secret_refs is empty.*cronix serve refuses/m,
    );
  });

  it('a job with secret refs gets no warning', () => {
    const signed = { ...valid, jobs: [{ ...valid.jobs[0], auth: { secret_refs: ['env:X'] } }] };
    const json = cronix(['validate', file('signed.json', signed), '-o', 'json']);
    expect(JSON.parse(json.stdout)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it('exits 1 and lists every error with its path', () => {
    const path = file('invalid.json', {
      version: 2,
      app: 'Billing',
      jobs: [
        { name: 'a', schedule: '61 * * * *', request: { url: 'ftp://x' }, extra: true },
        {
          name: 'a',
          schedule: '@daily',
          request: { url: 'https://x.example.com' },
          policy: { timeout_seconds: 0 },
        },
      ],
    });
    const json = cronix(['validate', path, '-o', 'json']);
    expect(json.status).toBe(1);
    const out = JSON.parse(json.stdout) as {
      valid: boolean;
      errors: { path: string; message: string }[];
    };
    expect(out.valid).toBe(false);
    const paths = out.errors.map((e) => e.path);
    for (const p of [
      'version',
      'app',
      'jobs/0/schedule',
      'jobs/0/request/url',
      'jobs/0/extra',
      'jobs/1/name',
      'jobs/1/policy/timeout_seconds',
    ]) {
      expect(paths).toContain(p);
    }
    const human = cronix(['validate', path]);
    expect(human.status).toBe(1);
    expect(human.stdout).toMatch(/invalid, \d+ errors/);
    for (const e of out.errors) expect(human.stdout).toContain(`${e.path}: ${e.message}`);
  });

  it('reports unreadable files and JSON syntax errors as invalid, without a stack trace', () => {
    const missing = cronix(['validate', join(dir, 'nope.json'), '-o', 'json']);
    expect(missing.status).toBe(1);
    expect(JSON.parse(missing.stdout).errors[0].message).toMatch(/no such file/);
    const broken = cronix(['validate', file('broken.json', '{"version": 1,')]);
    expect(broken.status).toBe(1);
    expect(broken.stdout + broken.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 on usage errors', () => {
    expect(cronix(['validate']).status).toBe(2);
    expect(cronix(['validate', 'x.json', '--bogus']).status).toBe(2);
    expect(cronix(['validate', 'x.json', '-o', 'yaml']).status).toBe(2);
    expect(cronix(['frobnicate']).status).toBe(2);
  });
});

describe('cronix next', () => {
  it('prints the JSON shape of SPEC §3', () => {
    const r = cronix([
      'next',
      '30 2 * * *',
      '--tz',
      'Europe/Berlin',
      '--from',
      '2026-03-28T12:00:00Z',
      '-n',
      '2',
      '-o',
      'json',
    ]);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      schedule: '30 2 * * *',
      timezone: 'Europe/Berlin',
      fires: [
        { utc: '2026-03-29T01:00:00Z', local: '2026-03-29T03:00:00+02:00' },
        { utc: '2026-03-30T00:30:00Z', local: '2026-03-30T02:30:00+02:00' },
      ],
    });
  });

  it('accepts Unix seconds for --from and prints fires strictly after it', () => {
    const r = cronix(['next', '*/15 * * * *', '--from', '1767225600', '-n', '2']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      '2026-01-01T00:15:00Z  2026-01-01T00:15:00+00:00\n2026-01-01T00:30:00Z  2026-01-01T00:30:00+00:00\n',
    );
  });

  it('prints six-field (seconds) schedules to the second, RFC 3339 without fractions', () => {
    const r = cronix([
      'next',
      '*/20 * * * * *',
      '--tz',
      'Asia/Kolkata',
      '--from',
      '2026-01-01T00:00:05.250Z',
      '-n',
      '3',
      '-o',
      'json',
    ]);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).fires).toEqual([
      { utc: '2026-01-01T00:00:20Z', local: '2026-01-01T05:30:20+05:30' },
      { utc: '2026-01-01T00:00:40Z', local: '2026-01-01T05:30:40+05:30' },
      { utc: '2026-01-01T00:01:00Z', local: '2026-01-01T05:31:00+05:30' },
    ]);
    const every = cronix(['next', '@every 5s', '--from', '1767225600.5', '-n', '2']);
    expect(every.status).toBe(0);
    expect(every.stdout).toBe(
      '2026-01-01T00:00:05Z  2026-01-01T00:00:05+00:00\n2026-01-01T00:00:10Z  2026-01-01T00:00:10+00:00\n',
    );
  });

  it('defaults --from to now', () => {
    const before = Date.now();
    const r = cronix(['next', '* * * * *', '-o', 'json']);
    const fire = Date.parse(JSON.parse(r.stdout).fires[0].utc);
    expect(fire).toBeGreaterThan(before - 1000);
    expect(fire).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it.each([
    [['next', '61 * * * *'], /^error: schedule: minute value 61 is out of range 0-59/],
    [['next', '* * * * *', '--tz', 'Mars/Base'], /^error: --tz: unknown time zone "Mars\/Base"/],
    [['next', '* * * * *', '--from', 'tomorrow'], /^error: --from: expected an RFC 3339 instant/],
    [['next', '* * * * *', '-n', '0'], /^error: -n: expected an integer from 1 to 10000/],
    [
      ['next', '*/61 * * * *'],
      /^error: schedule: minute step "\/61" is larger than the field's range/,
    ],
    [['next', '60 * * * * *'], /^error: schedule: second value 60 is out of range 0-59/],
    [['next', '@every 0s'], /^error: schedule: @every interval must be at least 1s, found 0s/],
  ])('%j → exit 1 and one line naming the field', (args, pattern) => {
    const r = cronix(args);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(pattern);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('cronix version and help', () => {
  it('prints the package version', () => {
    const r = cronix(['version', '-o', 'json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).version).toMatch(/^\d+\.\d+\.\d+/);
    expect(cronix(['version']).stdout).toMatch(/^cronix \d+\.\d+\.\d+/);
  });

  it.each([['--help'], ['validate', '--help'], ['next', '--help'], ['version', '--help']])(
    '%s exits 0 with usage',
    (...args) => {
      const r = cronix(args);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/Usage: cronix/);
    },
  );
});
