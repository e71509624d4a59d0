/** verifyRequest / unauthorizedResponse / triggerInfo with real Web Request objects. */
import { describe, expect, it } from 'vitest';
import { sign } from '../../src/contract/signature.js';
import { triggerInfo } from '../../src/sdk/trigger.js';
import { pathAndQuery, unauthorizedResponse, verifyRequest } from '../../src/sdk/verify.js';

const SECRET = 'sdk-test-secret';
const NOW = 1_800_000_000;
const now = () => NOW;

function signedRequest(
  url: string,
  init: {
    method?: string;
    body?: string | Uint8Array<ArrayBuffer>;
    secret?: string;
    t?: number;
  } = {},
): Request {
  const u = new URL(url);
  const method = init.method ?? 'POST';
  const header = sign({
    secret: init.secret ?? SECRET,
    method,
    path: u.pathname + u.search,
    body: init.body,
    timestamp: init.t ?? NOW,
  });
  return new Request(url, {
    method,
    headers: { 'X-Cron-Signature': header, 'X-Cron-Run-Id': 'run-1', 'X-Cron-Attempt': '2' },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
}

describe('verifyRequest', () => {
  it('accepts a signed request and leaves the body readable', async () => {
    const request = signedRequest('http://app.local/jobs/hello?x=1&y=%20', { body: '{"a":1}' });
    const result = await verifyRequest(request, { secrets: [SECRET], now });
    expect(result).toEqual({ ok: true, secretIndex: 0, timestamp: NOW });
    expect(request.bodyUsed).toBe(false);
    expect(await request.json()).toEqual({ a: 1 });
  });

  it('verifies binary bodies byte for byte', async () => {
    const body = new Uint8Array([0, 255, 10, 13, 0, 128]);
    const request = signedRequest('http://app.local/bin', { body });
    expect(await verifyRequest(request, { secrets: [SECRET], now })).toMatchObject({ ok: true });
    expect(new Uint8Array(await request.arrayBuffer())).toEqual(body);
  });

  it('accepts a bodiless GET', async () => {
    const request = signedRequest('http://app.local/.well-known/cron-manifest', { method: 'GET' });
    expect(await verifyRequest(request, { secrets: [SECRET], now })).toMatchObject({ ok: true });
  });

  it('reports the rotated secret index', async () => {
    const request = signedRequest('http://app.local/j', { body: 'b', secret: 'new' });
    expect(await verifyRequest(request, { secrets: ['old', 'new'], now })).toMatchObject({
      ok: true,
      secretIndex: 1,
    });
  });

  it('reports MissingSignature without reading the body', async () => {
    const request = new Request('http://app.local/j', { method: 'POST', body: 'x' });
    const result = await verifyRequest(request, { secrets: [SECRET], now });
    expect(result).toMatchObject({ ok: false, code: 'MissingSignature' });
    expect(await request.text()).toBe('x');
  });

  it('reports a tampered body, query and stale timestamp', async () => {
    const good = signedRequest('http://app.local/j?a=1', { body: 'original' });
    const header = good.headers.get('x-cron-signature')!;
    const tamperedBody = new Request('http://app.local/j?a=1', {
      method: 'POST',
      headers: { 'x-cron-signature': header },
      body: 'Original',
    });
    const tamperedQuery = new Request('http://app.local/j?a=2', {
      method: 'POST',
      headers: { 'x-cron-signature': header },
      body: 'original',
    });
    const opts = { secrets: [SECRET], now };
    expect(await verifyRequest(tamperedBody, opts)).toMatchObject({ code: 'SignatureMismatch' });
    expect(await verifyRequest(tamperedQuery, opts)).toMatchObject({ code: 'SignatureMismatch' });
    const stale = signedRequest('http://app.local/j', { body: 'x', t: NOW - 301 });
    expect(await verifyRequest(stale, opts)).toMatchObject({ code: 'StaleTimestamp' });
    const wide = signedRequest('http://app.local/j', { body: 'x', t: NOW - 301 });
    expect(await verifyRequest(wide, { ...opts, maxSkewSeconds: 600 })).toMatchObject({ ok: true });
  });

  it('defaults to the system clock', async () => {
    const request = signedRequest('http://app.local/j', { t: Math.floor(Date.now() / 1000) });
    expect(await verifyRequest(request, { secrets: [SECRET] })).toMatchObject({ ok: true });
  });

  it('throws when the body was already consumed', async () => {
    const request = signedRequest('http://app.local/j', { body: 'x' });
    await request.text();
    await expect(verifyRequest(request, { secrets: [SECRET], now })).rejects.toThrow(
      /already read/,
    );
  });

  it('takes path-and-query from the URL as sent', () => {
    expect(pathAndQuery(new Request('http://h:1/a%20b/c?q=1&r'))).toBe('/a%20b/c?q=1&r');
    expect(pathAndQuery(new Request('http://h/'))).toBe('/');
  });
});

describe('unauthorizedResponse', () => {
  it('answers 401 with the error shape', async () => {
    const request = signedRequest('http://app.local/j', { body: 'x' });
    const result = await verifyRequest(request, { secrets: ['wrong'], now });
    if (result.ok) throw new Error('expected a failure');
    const response = unauthorizedResponse(result);
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body).toEqual({
      error: { code: 'SignatureMismatch', message: expect.any(String) as string },
    });
    expect(body.error.message).not.toContain('wrong');
    expect(body.error.message).not.toContain(SECRET);
  });
});

describe('triggerInfo', () => {
  it('reads the trigger identifiers', () => {
    const request = new Request('http://app.local/j', {
      headers: {
        'X-Cron-Run-Id': '0190-abc',
        'Idempotency-Key': 'app/job#2026-01-01T00:00:00Z#abcd',
        'X-Cron-Schedule-Name': 'job',
        'X-Cron-Attempt': '3',
        'X-Cron-Fire-Time': '1767225600',
        'X-Cron-Fencing-Token': 'nope',
      },
    });
    expect(triggerInfo(request)).toEqual({
      runId: '0190-abc',
      runKey: 'app/job#2026-01-01T00:00:00Z#abcd',
      scheduleName: 'job',
      attempt: 3,
      fireTime: 1767225600,
      fireTimeActual: null,
      previousSuccessTime: null,
      fencingToken: null,
      leaderEpoch: null,
    });
  });
});
