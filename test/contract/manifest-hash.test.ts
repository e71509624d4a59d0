/**
 * Change hashes (SPEC §2): pinned values, independence from input order, and sensitivity to
 * every field of the job and to the schedule index.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  changeHash,
  jobChangeHash,
  singleScheduleManifest,
} from '../../src/contract/manifest/index.js';
import { expectValid, setPath, type Json } from './manifest-fixtures.js';

function fixture(): Record<string, Json> {
  return {
    version: 1,
    app: 'billing-service',
    jobs: [
      {
        name: 'settle-invoices',
        schedules: ['0 2 * * *', '*/10 * * * *'],
        request: {
          url: 'https://billing.internal/api/v1/scheduled/settle-invoices',
          headers: { 'X-Tenant': 'primary' },
        },
        policy: { concurrency: 'Forbid', concurrency_scope: 'global', timeout_seconds: 300 },
      },
      { name: 'other', schedule: '@daily', request: { url: 'https://billing.internal/other' } },
    ],
  };
}

function hashOf(raw: unknown, job = 'settle-invoices', index = 0): string {
  return changeHash(expectValid(raw), job, index);
}

function mutated(path: string, value: Json | undefined): Record<string, Json> {
  const m = fixture();
  setPath(m, path, value);
  return m;
}

describe('change hash', () => {
  it('is pinned for a fixed manifest (a change here means every deployed entry would update)', () => {
    expect(hashOf(fixture(), 'settle-invoices', 0)).toBe('a82832dc82591229');
    expect(hashOf(fixture(), 'settle-invoices', 1)).toBe('ac207bb76ea09b01');
  });

  it('is the first 16 hex characters of sha256 over the single-schedule canonical form', () => {
    const m = expectValid(fixture());
    const job = m.jobs.find((j) => j.name === 'settle-invoices');
    if (job === undefined) throw new Error('no job');
    const canonical = canonicalize(singleScheduleManifest(m.app, job, 1));
    expect(canonical).toContain('"schedules":["*/10 * * * *"]');
    expect(canonical).not.toContain('"other"');
    const digest = createHash('sha256').update(canonical).digest('hex');
    expect(jobChangeHash(m.app, job, 1)).toBe(digest.slice(0, 16));
    expect(jobChangeHash(m.app, job, 1)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('does not depend on key order, header order or job order of the input', () => {
    const base = hashOf(fixture());
    const m = fixture();
    const jobs = m['jobs'] as Record<string, Json>[];
    const first = jobs[0] as Record<string, Json>;
    const reordered: Record<string, Json> = Object.fromEntries(Object.entries(first).reverse());
    reordered['request'] = {
      headers: { 'X-Tenant': 'primary' },
      url: 'https://billing.internal/api/v1/scheduled/settle-invoices',
    };
    const shuffled = { jobs: [jobs[1] as Json, reordered], app: m['app'] as Json, version: 1 };
    expect(hashOf(shuffled)).toBe(base);
    const twoHeaders = (h: Record<string, Json>) => hashOf(mutated('jobs/0/request/headers', h));
    expect(twoHeaders({ A: '1', B: '2' })).toBe(twoHeaders({ B: '2', A: '1' }));
  });

  it('does not change when explicit defaults replace absent fields', () => {
    const explicit = mutated('jobs/0/policy/retries', {
      max_attempts: 3,
      min_seconds: 1,
      max_seconds: 60,
    });
    setPath(explicit, 'jobs/0/timezone', 'UTC');
    setPath(explicit, 'jobs/0/request/method', 'POST');
    expect(hashOf(explicit)).toBe(hashOf(fixture()));
  });

  const changes: [string, Json][] = [
    ['jobs/0/name', 'settle-invoices-2'],
    ['app', 'billing'],
    ['jobs/0/schedules/0', '0 3 * * *'],
    ['jobs/0/timezone', 'Europe/Paris'],
    ['jobs/0/request/method', 'PUT'],
    ['jobs/0/request/url', 'https://billing.internal/api/v2/settle'],
    ['jobs/0/request/headers/X-Tenant', 'secondary'],
    ['jobs/0/request/headers/X-More', '1'],
    ['jobs/0/request/body', '{}'],
    ['jobs/0/policy/concurrency', 'Replace'],
    ['jobs/0/policy/concurrency_scope', 'host'],
    ['jobs/0/policy/timeout_seconds', 301],
    ['jobs/0/policy/retries/max_attempts', 4],
    ['jobs/0/policy/retries/min_seconds', 2],
    ['jobs/0/policy/retries/max_seconds', 61],
    ['jobs/0/policy/max_concurrent', 1],
    ['jobs/0/policy/catchup/mode', 'latest'],
    ['jobs/0/policy/catchup/window_seconds', 60],
    ['jobs/0/policy/jitter/stable_seconds', 0],
    ['jobs/0/policy/jitter/random_seconds', 10],
    ['jobs/0/auth/secret_refs', ['env:CRON_SECRET']],
    ['jobs/0/enabled', true],
  ];

  it.each(changes)('changes when %s changes', (path, value) => {
    const name = path === 'jobs/0/name' ? (value as string) : 'settle-invoices';
    expect(hashOf(mutated(path, value), name)).not.toBe(hashOf(fixture()));
  });

  it('changes with the schedule index, and only the selected schedule matters', () => {
    expect(hashOf(fixture(), 'settle-invoices', 0)).not.toBe(
      hashOf(fixture(), 'settle-invoices', 1),
    );
    expect(hashOf(mutated('jobs/0/schedules/1', '@hourly'), 'settle-invoices', 0)).toBe(
      hashOf(fixture()),
    );
  });

  it('does not change when another job changes', () => {
    const other = mutated('jobs/1/request/url', 'https://billing.internal/elsewhere');
    setPath(other, 'jobs/1/policy/timeout_seconds', 10);
    expect(hashOf(other)).toBe(hashOf(fixture()));
    expect(hashOf(other, 'other')).not.toBe(hashOf(fixture(), 'other'));
  });

  it('throws RangeError for an unknown job or schedule index', () => {
    const m = expectValid(fixture());
    expect(() => changeHash(m, 'nope', 0)).toThrow(RangeError);
    expect(() => changeHash(m, 'settle-invoices', 2)).toThrow(RangeError);
    expect(() => changeHash(m, 'settle-invoices', -1)).toThrow(RangeError);
    expect(() => changeHash(m, 'settle-invoices', 0.5)).toThrow(RangeError);
  });
});
