/** Lock keys, the holder JSON shared by both backends, and the host identity. */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  LockConfigError,
  decodeHolder,
  encodeHolder,
  hostIdentity,
  validateLockKey,
} from '../../src/locks/index.js';

describe('validateLockKey', () => {
  it.each(['billing.settle-invoices', 'a', 'app.job_1', 'x'.repeat(200), '.hidden'])(
    'accepts %j',
    (key) => {
      expect(() => validateLockKey(key)).not.toThrow();
    },
  );
  it.each([
    ['', 'is empty'],
    ['a/b', 'contains "/"'],
    ['..', 'contains ".."'],
    ['x'.repeat(201), 'is longer than 200'],
  ])('rejects %j (%s)', (key, problem) => {
    expect(() => validateLockKey(key)).toThrow(LockConfigError);
    expect(() => validateLockKey(key)).toThrow(problem);
  });
});

describe('holder JSON', () => {
  const holder = { pid: 77, host: 'web-1', acquiredAt: Date.UTC(2024, 4, 1, 10, 0, 0, 250) };

  it('encodes pid, host and RFC 3339 acquired_at, and decodes back', () => {
    const text = encodeHolder(holder);
    expect(JSON.parse(text)).toEqual({
      pid: 77,
      host: 'web-1',
      acquired_at: '2024-05-01T10:00:00.250Z',
    });
    expect(decodeHolder(text)).toEqual(holder);
  });

  it.each([
    null,
    '',
    'not json',
    '[]',
    '{"pid":0,"host":"h","acquired_at":1}',
    '{"pid":1.5,"host":"h","acquired_at":1}',
    '{"pid":1,"host":"","acquired_at":1}',
    '{"pid":1,"host":"h"}',
    '{"pid":1,"host":"h","acquired_at":"yesterday"}',
  ])('decodes %j as no holder', (text) => {
    expect(decodeHolder(text)).toBeNull();
  });
});

describe('hostIdentity', () => {
  it('is $CRONIX_HOST_ID when set and non-empty, else the hostname', () => {
    expect(hostIdentity({ CRONIX_HOST_ID: 'node-7' })).toBe('node-7');
    expect(hostIdentity({ CRONIX_HOST_ID: '' })).toBe(hostname());
    expect(hostIdentity({})).toBe(hostname());
  });
});
