/** Every job's secrets are resolved before the daemon schedules anything (SPEC §9 item 2). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { resolveJobSecrets } from '../../src/daemon/job-secrets.js';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { manifest } from '../helpers/daemon.js';

const job = (name: string, refs: string[]) => ({
  name,
  schedule: '* * * * *',
  request: { url: 'https://example.com/x' },
  auth: { secret_refs: refs },
});

it('names every job whose refs are missing, unset or short; never a secret value', () => {
  const r = resolveJobSecrets(
    [
      manifest('billing', [
        job('ok', ['env:GOOD']),
        job('none', []),
        job('unset', ['env:NOPE']),
        job('short', ['raw:tiny-secret']),
        job('rotating', ['env:GOOD', 'env:SHORT']),
      ]),
    ],
    { GOOD: 'a-long-enough-secret-value', SHORT: 'abc' },
  );
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.errors).toEqual([
    expect.stringMatching(/^job billing\/none: no auth.secret_refs/),
    'job billing/rotating: secret too short: env:SHORT resolves to 3 bytes; an HMAC signing secret needs at least 16 bytes (generate one with "openssl rand -hex 32")',
    'job billing/short: secret too short: raw:[REDACTED] resolves to 11 bytes; an HMAC signing secret needs at least 16 bytes (generate one with "openssl rand -hex 32")',
    'job billing/unset: secret ref env:NOPE: env var NOPE is not set',
  ]);
  expect(JSON.stringify(r.errors)).not.toContain('tiny-secret');
  expect(JSON.stringify(r.errors)).not.toContain('a-long-enough');
});

it('returns the secrets in ref order when all resolve', () => {
  const r = resolveJobSecrets([manifest('a', [job('j', ['env:A', 'raw:second-secret-0123'])])], {
    A: 'first-secret-0123456',
  });
  expect(r).toEqual({
    ok: true,
    secrets: new Map([['a/j', ['first-secret-0123456', 'second-secret-0123']]]),
    envSecrets: new Map(),
    headerSecrets: new Map(),
  });
});

/** A command job (no auth: it signs nothing). */
const command = (name: string, envFromSecrets: Record<string, string> = {}) => ({
  name,
  schedule: '* * * * *',
  command: { argv: ['/bin/true'], env_from_secrets: envFromSecrets },
});

it('command jobs need no secret_refs; their env_from_secrets resolve (any length)', () => {
  const m = parseManifest({
    version: 1,
    app: 'ops',
    jobs: [command('bare'), command('db', { DB_PASSWORD: 'env:DB_PW', TOKEN: 'raw:t' })],
  });
  if (!m.ok) throw new Error(JSON.stringify(m.errors));
  expect(resolveJobSecrets([m.manifest], { DB_PW: 'pw' })).toEqual({
    ok: true,
    secrets: new Map(),
    envSecrets: new Map([
      ['ops/bare', {}],
      ['ops/db', { DB_PASSWORD: 'pw', TOKEN: 't' }],
    ]),
    headerSecrets: new Map(),
  });
});

it('an env_from_secrets ref that does not resolve is a start-up error naming job, variable and ref', () => {
  const m = parseManifest({
    version: 1,
    app: 'ops',
    jobs: [command('db', { DB_PASSWORD: 'file:/nonexistent/pw', KEY: 'raw:', OK: 'env:OK' })],
  });
  if (!m.ok) throw new Error(JSON.stringify(m.errors));
  const r = resolveJobSecrets([m.manifest], { OK: 'fine' });
  expect(r).toEqual({
    ok: false,
    errors: [
      'job ops/db: command.env_from_secrets DB_PASSWORD: secret ref file:/nonexistent/pw: file not readable: ENOENT',
      'job ops/db: command.env_from_secrets KEY: secret ref raw:[REDACTED]: raw ref is empty',
    ],
  });
});

it('jobs sharing refs each get the secrets, and each is named in the errors of a shared bad ref', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-secrets-'));
  try {
    writeFileSync(join(dir, 'key'), 'a-file-secret-0123456789\n');
    const shared = ['file:' + join(dir, 'key'), 'env:NEXT'];
    const r = resolveJobSecrets(
      [
        manifest('a', [job('one', shared), job('two', shared)]),
        manifest('b', [job('three', shared)]),
      ],
      { NEXT: 'next-secret-0123456789' },
    );
    expect(r.ok && [...r.secrets]).toEqual(
      ['a/one', 'a/two', 'b/three'].map((k) => [
        k,
        ['a-file-secret-0123456789', 'next-secret-0123456789'],
      ]),
    );
    const bad = resolveJobSecrets(
      [
        manifest('a', [
          job('one', ['env:NOPE']),
          job('ok', ['env:GOOD']),
          job('two', ['env:NOPE']),
        ]),
      ],
      { GOOD: 'a-long-enough-secret-value' },
    );
    expect(!bad.ok && bad.errors).toEqual([
      'job a/one: secret ref env:NOPE: env var NOPE is not set',
      'job a/two: secret ref env:NOPE: env var NOPE is not set',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('request.headers_from_secrets resolve with the job; a bad ref or value names job, header and ref', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-hs-'));
  writeFileSync(join(dir, 'two-lines'), 'first\nsecond\n');
  const keyed = (name: string, map: Record<string, string>) => ({
    ...job(name, ['env:GOOD']),
    request: { url: 'https://example.com/x', headers_from_secrets: map },
  });
  const ok = resolveJobSecrets([manifest('api', [keyed('k', { 'X-Api-Key': 'env:KEY' })])], {
    GOOD: 'a-long-enough-secret-value',
    KEY: 'k1',
  });
  expect(ok.ok && ok.headerSecrets).toEqual(new Map([['api/k', { 'X-Api-Key': 'k1' }]]));
  const bad = resolveJobSecrets(
    [
      manifest('api', [
        keyed('unset', { 'X-Api-Key': 'env:NOPE' }),
        keyed('lines', { 'X-Api-Key': `file:${join(dir, 'two-lines')}` }),
        keyed('bell', { Authorization: 'env:BELL' }),
      ]),
    ],
    { GOOD: 'a-long-enough-secret-value', BELL: 'Bearer \u0007 x' },
  );
  expect(!bad.ok && bad.errors).toEqual([
    'job api/bell: request.headers_from_secrets Authorization: secret ref env:BELL: the value holds a character a header cannot carry (a line break or another control character, or one beyond Latin-1)',
    'job api/lines: request.headers_from_secrets X-Api-Key: secret ref file:' +
      join(dir, 'two-lines') +
      ': the value holds a character a header cannot carry (a line break or another control character, or one beyond Latin-1)',
    'job api/unset: request.headers_from_secrets X-Api-Key: secret ref env:NOPE: env var NOPE is not set',
  ]);
  expect(JSON.stringify(bad)).not.toContain('second');
  expect(JSON.stringify(bad)).not.toContain('Bearer');
  rmSync(dir, { recursive: true });
});
