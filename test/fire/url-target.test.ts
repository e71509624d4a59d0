/** The parsed request URL (fire/url-target.ts): what the transports connect to and send. */
import { describe, expect, it } from 'vitest';
import { requestTarget, urlTarget } from '../../src/fire/url-target.js';

describe('urlTarget', () => {
  it('splits a URL as an HTTP client sends it', () => {
    expect(urlTarget('http://127.0.0.1:8080/jobs/a?x=1&y=2')).toEqual({
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: '8080',
      host: '127.0.0.1:8080',
      path: '/jobs/a?x=1&y=2',
      origin: 'http://127.0.0.1:8080',
    });
    expect(urlTarget('https://app.example:443/b')).toEqual({
      protocol: 'https:',
      hostname: 'app.example',
      port: '',
      host: 'app.example',
      path: '/b',
      origin: 'https://app.example',
    });
    expect(urlTarget('http://[::1]:9/c')).toEqual({
      protocol: 'http:',
      hostname: '::1',
      port: '9',
      host: '[::1]:9',
      path: '/c',
      origin: 'http://[::1]:9',
    });
  });

  it('gives URLs of one origin the same origin parts and their own paths', () => {
    const urls = [
      'http://shop.internal:3000/a',
      'http://shop.internal:3000/b?q',
      'http://shop.internal:3000',
    ];
    const targets = urls.map((u) => urlTarget(u));
    for (const t of targets) {
      if (typeof t === 'string') throw new Error(t);
      expect([t.protocol, t.hostname, t.port, t.host, t.origin]).toEqual([
        'http:',
        'shop.internal',
        '3000',
        'shop.internal:3000',
        'http://shop.internal:3000',
      ]);
    }
    expect(targets.map((t) => (typeof t === 'string' ? t : t.path))).toEqual(['/a', '/b?q', '/']);
    // another scheme or port on the same host is another origin
    expect(urlTarget('https://shop.internal:3000/a')).toMatchObject({
      origin: 'https://shop.internal:3000',
      protocol: 'https:',
    });
    expect(urlTarget('http://shop.internal:3001/a')).toMatchObject({
      origin: 'http://shop.internal:3001',
      port: '3001',
    });
  });

  it('keeps decoded credentials, and says why a URL cannot be sent', () => {
    expect(urlTarget('http://u%40x:p%3Aw@h.example/')).toMatchObject({
      auth: 'u@x:p:w',
      host: 'h.example',
    });
    expect(urlTarget('http://h.example/')).not.toHaveProperty('auth');
    expect(urlTarget('ftp://h.example/f')).toBe('unsupported URL scheme ftp:');
    expect(urlTarget('not a url')).toBe('invalid URL');
    expect(urlTarget('not a url')).toBe('invalid URL'); // cached as invalid
  });

  it('requestTarget is the path and query, for any scheme', () => {
    expect(requestTarget('http://h.example/a/b?c=d')).toBe('/a/b?c=d');
    expect(requestTarget('ftp://h.example/f?x')).toBe('/f?x');
    expect(() => requestTarget('nope')).toThrow();
  });
});
