/** parseRedisUrl / redactRedisUrl tables: accepted forms, rejected forms, no password leaks. */
import { describe, expect, it } from 'vitest';
import { LockConfigError, parseRedisUrl, redactRedisUrl } from '../../src/locks/index.js';

const base = { tls: false, port: 6379, db: 0, username: undefined, password: undefined };

describe('parseRedisUrl accepts', () => {
  it.each([
    ['redis://127.0.0.1', { ...base, host: '127.0.0.1' }],
    ['redis://cache.internal:6380', { ...base, host: 'cache.internal', port: 6380 }],
    ['redis://h/5', { ...base, host: 'h', db: 5 }],
    ['redis://h:1/', { ...base, host: 'h', port: 1 }],
    ['rediss://h', { ...base, tls: true, host: 'h' }],
    ['REDIS://H', { ...base, host: 'h' }],
    ['redis://:s3cret@h', { ...base, host: 'h', password: 's3cret' }],
    [
      'redis://alice:s3cret@h:7000/2',
      { ...base, host: 'h', port: 7000, db: 2, username: 'alice', password: 's3cret' },
    ],
    ['redis://u:p%40ss%2Fw@h', { ...base, host: 'h', username: 'u', password: 'p@ss/w' }],
    ['redis://[::1]:6390', { ...base, host: '::1', port: 6390 }],
  ])('%s', (url, expected) => {
    expect(parseRedisUrl(url)).toEqual(expected);
  });
});

describe('parseRedisUrl rejects with LockConfigError', () => {
  it.each([
    ['redis//x', 'is not a URL'],
    ['127.0.0.1:6379', 'is not a URL'],
    ['', 'is not a URL'],
    ['http://h', 'has scheme "http:", not "redis:" or "rediss:"'],
    ['unix:///tmp/redis.sock', 'has scheme "unix:"'],
    ['redis://', 'has no host'],
    ['redis:///0', 'has no host'],
    ['redis://:topsecret@', 'is not a valid URL'],
    ['redis://h:notaport', 'is not a valid URL'],
    ['redis://u:topsecret@h:notaport', 'is not a valid URL'],
    ['redis://h:70000', 'is not a valid URL'],
    ['redis://h:0', 'has an invalid port'],
    ['redis://h/abc', 'database path that is not a number'],
    ['redis://h/1/2', 'database path that is not a number'],
    ['redis://:topsecret@h?tls=true', 'has a query or fragment'],
  ])('%j (%s)', (url, problem) => {
    let err: unknown;
    try {
      parseRedisUrl(url);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LockConfigError);
    const message = (err as Error).message;
    expect(message).toContain(problem);
    expect(message).toContain(JSON.stringify(redactRedisUrl(url)));
    expect(message).toContain('expected redis[s]://');
    expect(message).not.toContain('topsecret');
  });
});

describe('redactRedisUrl', () => {
  it.each([
    ['redis://h:6379/0', 'redis://h:6379/0'],
    ['redis://:pw@h', 'redis://:***@h'],
    ['redis://alice:pw@h:1/2', 'redis://alice:***@h:1/2'],
    ['redis://alice:p@w/d@h', 'redis://alice:***@h'],
    ['redis://justapassword@h', 'redis://***@h'],
    ['alice:pw@h', 'alice:***@h'],
    ['redis//alice:pw@h', 'redis//alice:***@h'],
  ])('%s → %s', (url, expected) => {
    expect(redactRedisUrl(url)).toBe(expected);
  });
});
