/** Secret ref parsing and resolution against a real temp dir; reasons never leak values. */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MIN_SECRET_BYTES,
  REDACTED,
  parseSecretRef,
  redact,
  refForDisplay,
  resolveSecretRefs,
  shortSecretsError,
} from '../../src/secrets/resolve.js';

let dir: string;
const SECRET = 's3cr3t-value-from-file';

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cronix-secrets-'));
  writeFileSync(path.join(dir, 'lf'), `${SECRET}\n`);
  writeFileSync(path.join(dir, 'crlf'), `${SECRET}\r\n`);
  writeFileSync(path.join(dir, 'plain'), SECRET);
  writeFileSync(path.join(dir, 'two-newlines'), `${SECRET}\n\n`);
  writeFileSync(path.join(dir, 'inner-space'), ` ${SECRET} \n`);
  writeFileSync(path.join(dir, 'empty'), '\n');
  writeFileSync(path.join(dir, 'locked'), SECRET);
  chmodSync(path.join(dir, 'locked'), 0o000);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('parseSecretRef', () => {
  it.each([
    ['env:CRON_SECRET', { kind: 'env', value: 'CRON_SECRET' }],
    ['file:/run/secrets/cron', { kind: 'file', value: '/run/secrets/cron' }],
    ['raw:abc:def', { kind: 'raw', value: 'abc:def' }],
    ['raw:', { kind: 'raw', value: '' }],
    ['CRON_SECRET', { kind: 'env', value: 'CRON_SECRET' }],
    ['vault:kv/x', { kind: 'env', value: 'vault:kv/x' }],
  ])('%s', (ref, expected) => {
    expect(parseSecretRef(ref)).toEqual(expected);
  });
});

describe('resolveSecretRefs', () => {
  const env = { CRON_SECRET: 'env-secret-1', EMPTY: '', OTHER: 'env-secret-2' };

  it('resolves env, bare, raw and file refs in ref order', () => {
    const result = resolveSecretRefs(
      ['env:CRON_SECRET', 'OTHER', 'raw:literal-secret', `file:${path.join(dir, 'lf')}`],
      { env },
    );
    expect(result).toEqual({
      secrets: ['env-secret-1', 'env-secret-2', 'literal-secret', SECRET],
      resolvedRefs: [
        'env:CRON_SECRET',
        'OTHER',
        'raw:literal-secret',
        `file:${path.join(dir, 'lf')}`,
      ],
      unresolved: [],
    });
  });

  it.each([
    ['lf', SECRET],
    ['crlf', SECRET],
    ['plain', SECRET],
    ['two-newlines', `${SECRET}\n`],
    ['inner-space', ` ${SECRET} `],
  ])('file %s: trims exactly one trailing newline', (name, expected) => {
    expect(resolveSecretRefs([`file:${path.join(dir, name)}`], { env }).secrets).toEqual([
      expected,
    ]);
  });

  it('reports unset and empty env vars', () => {
    const result = resolveSecretRefs(['env:MISSING', 'EMPTY', 'env:'], { env });
    expect(result.secrets).toEqual([]);
    expect(result.unresolved).toEqual([
      { ref: 'env:MISSING', reason: 'env var MISSING is not set' },
      { ref: 'EMPTY', reason: 'env var EMPTY is empty' },
      { ref: 'env:', reason: 'env ref has no variable name' },
    ]);
  });

  it('reports missing, unreadable and empty files without their contents', () => {
    const missing = `file:${path.join(dir, 'nope')}`;
    const locked = `file:${path.join(dir, 'locked')}`;
    const empty = `file:${path.join(dir, 'empty')}`;
    const isRoot = process.getuid?.() === 0;
    const result = resolveSecretRefs([missing, locked, empty, 'file:'], { env });
    const reasons = Object.fromEntries(result.unresolved.map((u) => [u.ref, u.reason]));
    expect(reasons[missing]).toBe('file not readable: ENOENT');
    // root reads mode-000 files; everyone else gets EACCES.
    if (isRoot) expect(result.secrets).toEqual([SECRET]);
    else expect(reasons[locked]).toBe('file not readable: EACCES');
    expect(reasons[empty]).toBe('file is empty');
    expect(reasons['file:']).toBe('file ref has no path');
  });

  it('reports a directory as not readable', () => {
    const result = resolveSecretRefs([`file:${dir}`], { env });
    expect(result.unresolved).toEqual([
      { ref: `file:${dir}`, reason: 'file not readable: EISDIR' },
    ]);
  });

  it('refuses a FIFO or a device instead of blocking on it', () => {
    const fifo = path.join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const result = resolveSecretRefs([`file:${fifo}`, 'file:/dev/zero'], { env });
    expect(result.secrets).toEqual([]);
    expect(result.unresolved).toEqual([
      { ref: `file:${fifo}`, reason: 'file not readable: not a regular file' },
      { ref: 'file:/dev/zero', reason: 'file not readable: not a regular file' },
    ]);
  });

  it('uses an injected readFile and maps odd errors to a generic reason', () => {
    const result = resolveSecretRefs(['file:/x', 'file:/y'], {
      env,
      readFile: (p) => {
        if (p === '/x') return Buffer.from('from-buffer\n');
        throw new Error(`boom ${SECRET}`);
      },
    });
    expect(result.secrets).toEqual(['from-buffer']);
    expect(result.unresolved).toEqual([
      { ref: 'file:/y', reason: 'file not readable: read error' },
    ]);
  });

  it('reports an empty raw literal', () => {
    expect(resolveSecretRefs(['raw:'], { env }).unresolved).toEqual([
      { ref: 'raw:', reason: 'raw ref is empty' },
    ]);
  });

  it('defaults to process.env', () => {
    process.env['CRONIX_TEST_SECRET_REF'] = 'from-process-env';
    try {
      expect(resolveSecretRefs(['CRONIX_TEST_SECRET_REF']).secrets).toEqual(['from-process-env']);
    } finally {
      delete process.env['CRONIX_TEST_SECRET_REF'];
    }
  });

  it('never puts a secret value in a reason', () => {
    const values = [SECRET, 'env-secret-1', 'env-secret-2'];
    const result = resolveSecretRefs(
      [
        'env:MISSING',
        'EMPTY',
        `file:${path.join(dir, 'nope')}`,
        `file:${path.join(dir, 'empty')}`,
        `file:${dir}`,
        'raw:',
      ],
      { env },
    );
    expect(result.unresolved).toHaveLength(6);
    for (const { reason } of result.unresolved) {
      for (const value of values) expect(reason).not.toContain(value);
    }
  });
});

describe('shortSecretsError', () => {
  const env = { LONG: 'x'.repeat(MIN_SECRET_BYTES), SHORT: 'y'.repeat(MIN_SECRET_BYTES - 1) };

  it('accepts secrets of at least 16 bytes', () => {
    expect(MIN_SECRET_BYTES).toBe(16);
    expect(shortSecretsError(resolveSecretRefs(['env:LONG'], { env }))).toBeNull();
    expect(shortSecretsError(resolveSecretRefs([], { env }))).toBeNull();
  });

  it('names every short ref and its length in bytes, never the value', () => {
    const message = shortSecretsError(
      resolveSecretRefs(['env:LONG', 'env:SHORT', 'raw:abc', 'raw:ééééééé'], { env }),
    );
    expect(message).toBe(
      'secret too short: env:SHORT resolves to 15 bytes; raw:[REDACTED] resolves to 3 bytes; ' +
        'raw:[REDACTED] resolves to 14 bytes; an HMAC signing secret needs at least 16 bytes ' +
        '(generate one with "openssl rand -hex 32")',
    );
    expect(message).not.toContain('yyy');
    expect(message).not.toContain('abc');
  });

  it('counts UTF-8 bytes, not characters', () => {
    // 8 characters, 16 bytes
    expect(shortSecretsError(resolveSecretRefs(['raw:éééééééé'], { env }))).toBeNull();
  });
});

describe('redact', () => {
  it('replaces every occurrence of every secret', () => {
    expect(redact('a=s1 b=s2 c=s1', ['s1', 's2'])).toBe(
      `a=${REDACTED} b=${REDACTED} c=${REDACTED}`,
    );
  });

  it('hides a secret that contains another one completely', () => {
    expect(redact('token=abcdef', ['abc', 'abcdef'])).toBe(`token=${REDACTED}`);
  });

  it('ignores empty secrets and leaves other text alone', () => {
    expect(redact('nothing here', ['', 'zzz'])).toBe('nothing here');
  });

  it('hides raw refs in display form', () => {
    expect(refForDisplay('raw:hunter2')).toBe(`raw:${REDACTED}`);
    expect(refForDisplay('env:CRON_SECRET')).toBe('env:CRON_SECRET');
    expect(refForDisplay('file:/run/s')).toBe('file:/run/s');
  });
});
