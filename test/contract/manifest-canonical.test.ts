/**
 * Normalization, canonical form and effective extension values (SPEC §2, §8).
 */
import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  canonicalJob,
  effectivePolicy,
  isJobEnabled,
  parseManifest,
  type Manifest,
} from '../../src/contract/manifest/index.js';
import { baseManifest, expectValid, manifestWith, type Json } from './manifest-fixtures.js';

const V1_JOB_TAIL =
  '"timezone":"UTC","request":{"method":"POST","url":"https://x.example.com/cron/a","headers":{},"body":""},' +
  '"policy":{"concurrency":"Forbid","concurrency_scope":"host","timeout_seconds":60,' +
  '"retries":{"max_attempts":3,"min_seconds":1,"max_seconds":60}},"auth":{"secret_refs":[]}';
const BASE_CANONICAL = `{"version":1,"app":"app","jobs":[{"name":"a","schedules":["@hourly"],${V1_JOB_TAIL}}]}`;

function canonical(raw: unknown): string {
  return canonicalize(expectValid(raw));
}

const fullJob: Record<string, Json> = {
  enabled: false,
  auth: { secret_refs: ['env:NEW', 'env:OLD'] },
  policy: {
    jitter: { random_seconds: 5, stable_seconds: 30 },
    catchup: { max_runs: 10, window_seconds: 3600, mode: 'all' },
    queue_max: 50,
    max_concurrent: 2,
    retries: { max_seconds: 30, min_seconds: 2, max_attempts: 5 },
    timeout_seconds: 120,
    concurrency_scope: 'global',
    concurrency: 'Enqueue',
  },
  request: {
    body: '{"x":"é\\u2028"}',
    headers: { 'X-B': '2', 'X-A': '1' },
    url: 'https://x.example.com/a?b=1',
    method: 'PUT',
  },
  timezone: 'Europe/Berlin',
  schedules: ['0 2 * * *', '30 14 * * 1-5'],
  name: 'full',
};

describe('canonical form', () => {
  it('fills every v1 default of a minimal manifest', () => {
    expect(canonical(baseManifest())).toBe(BASE_CANONICAL);
  });

  it('writes a fully specified job in the SPEC key order, extensions after the v1 keys', () => {
    const m = { jobs: [fullJob], app: 'app', version: 1 };
    expect(canonical(m)).toBe(
      '{"version":1,"app":"app","jobs":[{"name":"full","schedules":["0 2 * * *","30 14 * * 1-5"],' +
        '"timezone":"Europe/Berlin","request":{"method":"PUT","url":"https://x.example.com/a?b=1",' +
        '"headers":{"X-A":"1","X-B":"2"},"body":"{\\"x\\":\\"é\\\\u2028\\"}"},' +
        '"policy":{"concurrency":"Enqueue","concurrency_scope":"global","timeout_seconds":120,' +
        '"retries":{"max_attempts":5,"min_seconds":2,"max_seconds":30},"max_concurrent":2,"queue_max":50,' +
        '"catchup":{"mode":"all","window_seconds":3600,"max_runs":10},' +
        '"jitter":{"stable_seconds":30,"random_seconds":5}},' +
        '"auth":{"secret_refs":["env:NEW","env:OLD"]},"enabled":false}]}',
    );
  });

  it('canonicalizes explicit v1 defaults exactly like absent ones', () => {
    const explicit = manifestWith({
      'jobs/0/timezone': 'UTC',
      'jobs/0/request/method': 'POST',
      'jobs/0/request/headers': {},
      'jobs/0/request/body': '',
      'jobs/0/policy': {
        concurrency: 'Forbid',
        concurrency_scope: 'host',
        timeout_seconds: 60,
        retries: { max_attempts: 3, min_seconds: 1, max_seconds: 60 },
      },
    });
    expect(canonical(explicit)).toBe(BASE_CANONICAL);
  });

  it('leaves absent and empty extension objects out, so v1 bytes stay v1', () => {
    expect(
      canonical(manifestWith({ 'jobs/0/policy/catchup': {}, 'jobs/0/policy/jitter': {} })),
    ).toBe(BASE_CANONICAL);
  });

  it('writes only the extension sub-fields that were set, in the defined order', () => {
    const m = manifestWith({
      'jobs/0/policy/jitter/random_seconds': 0,
      'jobs/0/policy/catchup/window_seconds': 0,
      'jobs/0/enabled': true,
    });
    expect(canonical(m)).toContain(
      '"max_seconds":60},"catchup":{"window_seconds":0},"jitter":{"random_seconds":0}},"auth"',
    );
    expect(canonical(m)).toMatch(/"auth":\{"secret_refs":\[\]\},"enabled":true\}\]\}$/);
  });

  it('rewrites schedule as schedules and keeps the order of schedules', () => {
    const m = manifestWith({
      'jobs/0/schedule': undefined,
      'jobs/0/schedules': ['@daily', '@hourly', '0 3 * * *'],
    });
    expect(canonical(m)).toContain('"schedules":["@daily","@hourly","0 3 * * *"]');
  });

  it('sorts jobs by name and headers by code unit', () => {
    const job = (name: string): Json => ({
      name,
      schedule: '@daily',
      request: { url: 'https://x.example.com' },
    });
    const m = { version: 1, app: 'app', jobs: [job('b'), job('a-2'), job('a'), job('a-10')] };
    expect(expectValid(m).jobs.map((j) => j.name)).toEqual(['a', 'a-10', 'a-2', 'b']);
    const headers = { b: '1', C: '2', a: '3', '10': '4', '2': '5', 'Z-z': '6', __proto__x: '7' };
    const c = canonical(manifestWith({ 'jobs/0/request/headers': headers }));
    expect(c).toContain(
      '"headers":{"10":"4","2":"5","C":"2","Z-z":"6","__proto__x":"7","a":"3","b":"1"}',
    );
  });

  it('keeps a header named __proto__ as a header', () => {
    const raw = JSON.parse(
      '{"version":1,"app":"app","jobs":[{"name":"a","schedule":"@daily","request":{"url":"https://x.example.com","headers":{"__proto__":"v"}}}]}',
    ) as unknown;
    const m = expectValid(raw);
    expect(Object.keys(m.jobs[0]?.request?.headers ?? {})).toEqual(['__proto__']);
    expect(canonicalize(m)).toContain('"headers":{"__proto__":"v"}');
  });

  it('does not depend on the key order of the input', () => {
    const reversed = (value: Json): Json => {
      if (Array.isArray(value)) return value.map(reversed);
      if (value === null || typeof value !== 'object') return value;
      return Object.fromEntries(
        Object.entries(value)
          .reverse()
          .map(([k, v]) => [k, reversed(v)]),
      );
    };
    const m = { version: 1, app: 'app', jobs: [fullJob, ...(baseManifest()['jobs'] as Json[])] };
    expect(canonical(reversed(m))).toBe(canonical(m));
  });

  it('sorts jobs and headers of a manifest built in code, without mutating it', () => {
    const parsed = expectValid({
      version: 1,
      app: 'app',
      jobs: [fullJob, ...(baseManifest()['jobs'] as Json[])],
    });
    const built: Manifest = { ...parsed, jobs: [...parsed.jobs].reverse() };
    expect(canonicalize(built)).toBe(canonicalize(parsed));
    expect(built.jobs.map((j) => j.name)).toEqual(['full', 'a']);
  });

  it('canonicalJob is the job object of the canonical form', () => {
    const m = expectValid(baseManifest());
    const job = m.jobs[0];
    if (job === undefined) throw new Error('no job');
    expect(canonicalJob(job)).toBe(`{"name":"a","schedules":["@hourly"],${V1_JOB_TAIL}}`);
    expect(JSON.parse(canonicalJob(job))).toEqual(job);
  });
});

describe('effective extension values', () => {
  it('applies the §8 defaults when nothing is set', () => {
    const job = expectValid(baseManifest()).jobs[0];
    if (job === undefined) throw new Error('no job');
    expect(job.policy).toEqual({
      concurrency: 'Forbid',
      concurrency_scope: 'host',
      timeout_seconds: 60,
      retries: { max_attempts: 3, min_seconds: 1, max_seconds: 60 },
    });
    expect(job.enabled).toBeUndefined();
    expect(effectivePolicy(job)).toEqual({
      concurrency: 'Forbid',
      concurrency_scope: 'host',
      timeout_seconds: 60,
      retries: { max_attempts: 3, min_seconds: 1, max_seconds: 60 },
      max_concurrent: 1,
      queue_max: 100,
      catchup: { mode: 'latest', window_seconds: null, max_runs: 100 },
      jitter: { stable_seconds: 0, random_seconds: 0 },
      watch: { grace_seconds: 120 },
    });
    expect(isJobEnabled(job)).toBe(true);
  });

  it('policy.watch (SPEC §15): kept only when set, after jitter in the canonical form, bounded 10..86400', () => {
    const m = baseManifest();
    const job = (m['jobs'] as Record<string, Json>[])[0] as Record<string, Json>;
    job['policy'] = { watch: { grace_seconds: 300 } };
    const parsed = expectValid(m);
    expect(parsed.jobs[0]?.policy.watch).toEqual({ grace_seconds: 300 });
    expect(effectivePolicy(parsed.jobs[0]!).watch).toEqual({ grace_seconds: 300 });
    expect(canonicalize(parsed)).toContain(
      '"retries":{"max_attempts":3,"min_seconds":1,"max_seconds":60},"watch":{"grace_seconds":300}}',
    );
    for (const bad of [9, 86_401, 1.5]) {
      job['policy'] = { watch: { grace_seconds: bad } };
      const r = parseManifest(m);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors[0]?.path).toBe('jobs/0/policy/watch/grace_seconds');
    }
    job['policy'] = { watch: { grace: 30 } };
    const unknown = parseManifest(m);
    expect(unknown.ok).toBe(false);
  });

  it('uses the values that were set, and defaults for the rest', () => {
    const m = manifestWith({
      'jobs/0/policy/catchup/window_seconds': 600,
      'jobs/0/policy/jitter/stable_seconds': 15,
      'jobs/0/policy/max_concurrent': 4,
      'jobs/0/enabled': false,
    });
    const job = expectValid(m).jobs[0];
    if (job === undefined) throw new Error('no job');
    const effective = effectivePolicy(job);
    expect(effective.max_concurrent).toBe(4);
    expect(effective.queue_max).toBe(100);
    expect(effective.catchup).toEqual({ mode: 'latest', window_seconds: 600, max_runs: 100 });
    expect(effective.jitter).toEqual({ stable_seconds: 15, random_seconds: 0 });
    expect(isJobEnabled(job)).toBe(false);
    expect(job.policy.catchup).toEqual({ window_seconds: 600 });
  });
});
