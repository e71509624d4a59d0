/**
 * `request.headers_from_secrets` (finding 5): header name → secret ref, checked like the other
 * request headers (one namespace with `headers`, ignoring case; reserved names refused; refs
 * follow the secret ref pattern), normalized (sorted; an empty map dropped) and written in the
 * canonical form after `body` only when set, so jobs without it hash as before.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJob } from '../../src/contract/manifest/canonical.js';
import { parseManifest } from '../../src/contract/manifest/index.js';
import type { Job } from '../../src/contract/manifest/types.js';

function parse(request: Record<string, unknown>) {
  return parseManifest({
    version: 1,
    app: 'shop',
    jobs: [
      { name: 'a', schedule: '0 * * * *', request: { url: 'https://x.example/a', ...request } },
    ],
  });
}

function errors(request: Record<string, unknown>): { path: string; message: string }[] {
  const r = parse(request);
  return r.ok ? [] : r.errors.map((e) => ({ path: e.path, message: e.message }));
}

describe('request.headers_from_secrets', () => {
  it('is accepted, sorted, and written after body in the canonical form', () => {
    const r = parse({
      headers_from_secrets: { 'X-Upstream-Key': 'env:UP', Authorization: 'file:/run/s/auth' },
    });
    expect(r.ok).toBe(true);
    const job = (r.ok ? r.manifest.jobs[0] : undefined) as Job;
    expect(Object.keys(job.request?.headers_from_secrets ?? {})).toEqual([
      'Authorization',
      'X-Upstream-Key',
    ]);
    expect(canonicalJob(job)).toContain(
      '"headers":{},"body":"","headers_from_secrets":{"Authorization":"file:/run/s/auth","X-Upstream-Key":"env:UP"}}',
    );
  });

  it('an empty map is the same job as none (same canonical form)', () => {
    const none = parse({});
    const empty = parse({ headers_from_secrets: {} });
    expect(none.ok && empty.ok).toBe(true);
    if (!none.ok || !empty.ok) return;
    expect(empty.manifest.jobs[0]!.request).not.toHaveProperty('headers_from_secrets');
    expect(canonicalJob(empty.manifest.jobs[0]!)).toBe(canonicalJob(none.manifest.jobs[0]!));
  });

  it.each([
    [
      { headers: { 'X-Api-Key': 'x' }, headers_from_secrets: { 'x-api-key': 'env:K' } },
      'jobs/0/request/headers_from_secrets/x-api-key',
      'header "x-api-key" is also set in headers ("X-Api-Key"); set it in one of headers and headers_from_secrets',
    ],
    [
      { headers_from_secrets: { 'X-Cron-Run-Id': 'env:K' } },
      'jobs/0/request/headers_from_secrets/X-Cron-Run-Id',
      'is set by cronix on every attempt',
    ],
    [
      { headers_from_secrets: { 'Content-Length': 'env:K' } },
      'jobs/0/request/headers_from_secrets/Content-Length',
      'is managed by the HTTP client',
    ],
    [
      { headers_from_secrets: { 'X-Key': 'env:K', 'x-key': 'env:L' } },
      'jobs/0/request/headers_from_secrets/x-key',
      'duplicate header "x-key": header names ignore letter case and "X-Key" is already set',
    ],
    [
      { headers_from_secrets: { 'X-Key': 'env:has space' } },
      'jobs/0/request/headers_from_secrets/X-Key',
      '',
    ],
    [
      { headers_from_secrets: { 'bad header': 'env:K' } },
      'jobs/0/request/headers_from_secrets/bad header',
      'expected a header name that is an HTTP token',
    ],
    [{ headers_from_secrets: ['env:K'] }, 'jobs/0/request/headers_from_secrets', ''],
  ])('%j is refused at %s', (request, path, message) => {
    const found = errors(request);
    expect(found.map((e) => e.path)).toContain(path);
    expect(found.find((e) => e.path === path)?.message).toContain(message);
  });

  it('more than 64 are refused', () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`X-K${i}`, 'env:K']));
    expect(errors({ headers_from_secrets: many }).map((e) => e.path)).toContain(
      'jobs/0/request/headers_from_secrets',
    );
  });
});
