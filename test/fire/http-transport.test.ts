/**
 * Both HTTP transports (node:http: the shim's; undici: the daemon's) against a real local server (test/helpers/sink.ts): what arrives on
 * the wire, statuses, redirects, the body cap, the deadline, drops, refusals, aborts and
 * connection reuse and cleanup.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpTransport } from '../../src/fire/http-transport.js';
import { createUndiciTransport } from '../../src/fire/undici-transport.js';
import type { SendOptions, Transport, TransportRequest } from '../../src/fire/types.js';
import { freePort, sequence, startSink, type Sink, type SinkAction } from '../helpers/sink.js';
import { selfSignedCert } from '../helpers/tls.js';

const KIB64 = 64 * 1024;
const OPTS: SendOptions = { timeoutMs: 5000, maxBodyBytes: KIB64 };

/** The two transports: the shim's (node:http, one connection per send by default) and the daemon's. */
const KINDS: {
  name: string;
  make: (o?: { keepAlive?: boolean; maxSockets?: number }) => Transport;
  alwaysKeepAlive: boolean;
}[] = [
  { name: 'node:http', make: (o = {}) => createHttpTransport(o), alwaysKeepAlive: false },
  {
    name: 'undici',
    make: (o = {}) =>
      createUndiciTransport(o.maxSockets === undefined ? {} : { maxSockets: o.maxSockets }),
    alwaysKeepAlive: true,
  },
];

describe.each(KINDS)('$name transport', ({ make, alwaysKeepAlive }) => {
  let sink: Sink;
  let transport: Transport;

  beforeEach(async () => {
    sink = await startSink();
    transport = make();
  });

  afterEach(async () => {
    await transport.close?.();
    await sink.close();
  });

  function req(path: string, extra: Partial<TransportRequest> = {}): TransportRequest {
    return { method: 'POST', url: `${sink.url}${path}`, headers: {}, body: '', ...extra };
  }

  describe('responses', () => {
    it.each([200, 201, 204, 400, 404, 422, 500, 503])(
      'returns status %i with its body',
      async (status) => {
        sink.setScript(() => ({ status, body: status === 204 ? '' : `body of ${status}` }));
        const result = await transport.send(req('/s'), OPTS);
        expect(result).toEqual({
          kind: 'response',
          status,
          bodyExcerpt: status === 204 ? '' : `body of ${status}`,
        });
      },
    );

    it('follows a scripted status sequence across sends', async () => {
      sink.setScript(sequence([503, 503, 200]));
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await transport.send(req('/seq'), OPTS);
        if (r.kind === 'response') statuses.push(r.status);
      }
      expect(statuses).toEqual([503, 503, 200, 200]);
    });

    it.each([301, 302, 303, 307, 308])(
      'returns a %i with its location and never follows it',
      async (status) => {
        sink.setScript(
          sequence([{ status, headers: { location: `${sink.url}/elsewhere?x=1` } }, 200]),
        );
        const result = await transport.send(req('/start'), OPTS);
        expect(result).toEqual({
          kind: 'response',
          status,
          bodyExcerpt: '',
          location: `${sink.url}/elsewhere?x=1`,
        });
        // The next request the server sees is ours, not a followed redirect.
        await transport.send(req('/next'), OPTS);
        expect(sink.requests.map((r) => r.url)).toEqual(['/start', '/next']);
      },
    );
  });

  describe('what the server receives', () => {
    it('gets the exact method, target, headers and UTF-8 body, framed by content-length', async () => {
      const body = 'héllo — ✓ 🎉 \u0000\u0001\t\r\n{"a":[1,2]} ' + 'Ω'.repeat(500);
      const headers = {
        'Content-Type': 'application/json; charset=utf-8',
        'X-Cron-Run-Id': '01928f7e-0000-7000-8000-000000000000',
        'X-Custom': 'a  b,c;d="e"',
        'Content-Length': '3', // stale: the transport frames the body itself
      };
      const path = '/api/v1/run?x=1&y=%20z&empty=&utf=%C3%A9#frag';
      const result = await transport.send(req(path, { method: 'PUT', headers, body }), OPTS);
      expect(result.kind).toBe('response');
      const [got] = await sink.waitForRequests(1);
      expect(got?.method).toBe('PUT');
      expect(got?.url).toBe('/api/v1/run?x=1&y=%20z&empty=&utf=%C3%A9');
      expect(got?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
      expect(got?.bodyText).toBe(body);
      expect(got?.headers).toEqual({
        host: `127.0.0.1:${sink.port}`,
        connection: alwaysKeepAlive ? 'keep-alive' : 'close',
        'content-length': String(Buffer.byteLength(body)),
        'content-type': 'application/json; charset=utf-8',
        'x-cron-run-id': '01928f7e-0000-7000-8000-000000000000',
        'x-custom': 'a  b,c;d="e"',
      });
      // Names go out as given (rawHeaders keep case).
      expect(got?.rawHeaders).toContain('X-Cron-Run-Id');
    });

    it.each(['GET', 'DELETE', 'HEAD'])(
      'sends no body and no framing headers for an empty %s',
      async (method) => {
        await transport.send(req('/empty', { method }), OPTS);
        const [got] = await sink.waitForRequests(1);
        expect(got?.method).toBe(method);
        expect(got?.body.length).toBe(0);
        expect(got?.headers['content-length']).toBeUndefined();
        expect(got?.headers['transfer-encoding']).toBeUndefined();
        expect(Object.keys(got?.headers ?? {}).sort()).toEqual(['connection', 'host']);
      },
    );

    it('sends content-length 0 (never chunked) for an empty POST', async () => {
      await transport.send(
        req('/empty-post', { headers: { 'Transfer-Encoding': 'chunked' } }),
        OPTS,
      );
      const [got] = await sink.waitForRequests(1);
      expect(got?.headers['content-length']).toBe('0');
      expect(got?.headers['transfer-encoding']).toBeUndefined();
      expect(got?.body.length).toBe(0);
    });

    it('keeps a Host header the request sets, and sends URL credentials as Basic authorization', async () => {
      await transport.send(req('/vhost?a=1', { headers: { Host: 'billing.internal' } }), OPTS);
      const withUser = `http://us%40er:p%3Ass@127.0.0.1:${sink.port}/auth`;
      await transport.send({ method: 'GET', url: withUser, headers: {}, body: '' }, OPTS);
      const [vhost, auth] = await sink.waitForRequests(2);
      expect(vhost?.url).toBe('/vhost?a=1');
      expect(vhost?.headers.host).toBe('billing.internal');
      expect(auth?.headers.host).toBe(`127.0.0.1:${sink.port}`);
      expect(auth?.headers.authorization).toBe(
        `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`,
      );
      expect(auth?.headers['content-length']).toBeUndefined(); // a GET without a body: no framing
    });
  });

  describe('body cap', () => {
    it('keeps exactly 64 KiB of a 10 MiB body and closes the connection', async () => {
      sink.setScript(() => ({ bigBody: 10 * 1024 * 1024 }));
      const started = performance.now();
      const result = await transport.send(req('/big'), OPTS);
      const elapsed = performance.now() - started;
      expect(result.kind).toBe('response');
      if (result.kind !== 'response') return;
      expect(result.status).toBe(200);
      expect(Buffer.byteLength(result.bodyExcerpt)).toBe(65536);
      expect(result.bodyExcerpt).toBe('a'.repeat(65536));
      const [got] = await sink.waitForRequests(1);
      await expect(got?.whenClosed).resolves.toBeGreaterThan(0);
      expect(elapsed).toBeLessThan(5000);
    });

    it('returns from a body that never ends', async () => {
      sink.setScript(() => ({ bigBody: Infinity }));
      const result = await transport.send(req('/endless'), OPTS);
      expect(result.kind === 'response' && result.bodyExcerpt.length).toBe(KIB64);
      const [got] = await sink.waitForRequests(1);
      await got?.whenClosed;
      expect(got?.bytesSent).toBeGreaterThanOrEqual(KIB64);
    });

    it('cuts a multi-byte body on a character boundary, never past the cap', async () => {
      sink.setScript(() => ({ status: 500, body: '€'.repeat(30000) })); // 3 bytes each
      const result = await transport.send(req('/euro'), OPTS);
      expect(result.kind === 'response' && result.bodyExcerpt).toBe('€'.repeat(21845));
    });

    it('keeps a body of exactly the cap whole, and honours a smaller cap', async () => {
      sink.setScript(
        sequence([
          { status: 200, body: 'b'.repeat(KIB64) },
          { status: 200, body: 'xyz' },
        ]),
      );
      const whole = await transport.send(req('/exact'), OPTS);
      expect(whole.kind === 'response' && whole.bodyExcerpt.length).toBe(KIB64);
      const small = await transport.send(req('/small'), { ...OPTS, maxBodyBytes: 2 });
      expect(small).toEqual({ kind: 'response', status: 200, bodyExcerpt: 'xy' });
    });
  });

  describe('deadline', () => {
    const DEADLINE = 300;

    it('times out a hung server and closes the connection at the deadline', async () => {
      sink.setScript(() => ({ hang: true }));
      const start = performance.now();
      const result = await transport.send(req('/hang'), { ...OPTS, timeoutMs: DEADLINE });
      expect(result).toEqual({ kind: 'timeout' });
      const [got] = await sink.waitForRequests(1);
      await got?.whenClosed;
      const closedAt = got?.closedAtPerf ?? NaN;
      expect(closedAt - start).toBeGreaterThanOrEqual(DEADLINE);
      expect(closedAt - start).toBeLessThan(DEADLINE + 1000);
    });

    it('covers the body read: headers then a stalled body is a timeout', async () => {
      sink.setScript(() => ({ hang: true, status: 200, partialBody: 'partial' }));
      const start = performance.now();
      const result = await transport.send(req('/slow-body'), { ...OPTS, timeoutMs: DEADLINE });
      expect(result).toEqual({ kind: 'timeout' });
      const [got] = await sink.waitForRequests(1);
      await got?.whenClosed;
      const closedAt = got?.closedAtPerf ?? NaN;
      expect(closedAt - start).toBeGreaterThanOrEqual(DEADLINE);
    });

    it('returns a slow response that beats the deadline, times out one that does not', async () => {
      sink.setScript(
        sequence([
          { status: 200, body: 'late', delayMs: 50 },
          { status: 200, delayMs: 2000 },
        ]),
      );
      const fast = await transport.send(req('/d1'), { ...OPTS, timeoutMs: 1000 });
      expect(fast).toEqual({ kind: 'response', status: 200, bodyExcerpt: 'late' });
      const slow = await transport.send(req('/d2'), { ...OPTS, timeoutMs: DEADLINE });
      expect(slow).toEqual({ kind: 'timeout' });
    });
  });

  describe('network errors and aborts', () => {
    it('reports a dropped connection as a network error', async () => {
      sink.setScript(() => ({ drop: true }));
      const result = await transport.send(req('/drop'), OPTS);
      expect(result.kind).toBe('network-error');
      expect(result.kind === 'network-error' && result.message).toMatch(
        /ECONNRESET|socket hang up|other side closed/,
      );
    });

    it('reports a connection lost in the body read as a network error, not a response', async () => {
      sink.setScript(() => ({ drop: true, status: 200, partialBody: 'half' }));
      const result = await transport.send(req('/half'), OPTS);
      expect(result.kind).toBe('network-error');
      expect(result.kind === 'network-error' && result.message).toMatch(/^response body: /);
    });

    it('reports a refused port as ECONNREFUSED, briefly and without a stack', async () => {
      const port = await freePort();
      const result = await transport.send(
        { method: 'POST', url: `http://127.0.0.1:${port}/x`, headers: {}, body: 'b' },
        OPTS,
      );
      expect(result.kind).toBe('network-error');
      if (result.kind !== 'network-error') return;
      expect(result.message).toContain('ECONNREFUSED');
      expect(result.message).not.toContain('\n');
      expect(result.message.length).toBeLessThan(200);
    });

    it('reports an unresolvable host as a network error', async () => {
      const result = await transport.send(
        { method: 'GET', url: 'http://cronix-test.invalid/', headers: {}, body: '' },
        OPTS,
      );
      expect(result).toMatchObject({ kind: 'network-error' });
    });

    it('verifies TLS: a self-signed https server is a network error, never a response', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cronix-tls-'));
      try {
        const { key, cert } = selfSignedCert(dir);
        let served = 0;
        const server = createHttpsServer({ key, cert }, (_q, s) => s.end(String(++served)));
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        const { port } = server.address() as { port: number };
        const result = await transport.send(
          { method: 'GET', url: `https://127.0.0.1:${port}/`, headers: {}, body: '' },
          OPTS,
        );
        server.closeAllConnections();
        server.close();
        expect(result).toMatchObject({
          kind: 'network-error',
          message: expect.stringMatching(/CERT|certificate/i),
        });
        expect(served).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('never throws on a bad URL, scheme, header or method', async () => {
      const bad: TransportRequest[] = [
        { method: 'GET', url: 'not a url', headers: {}, body: '' },
        { method: 'GET', url: 'ftp://127.0.0.1/', headers: {}, body: '' },
        req('/h', { headers: { 'X-Bad': 'a\r\nInjected: 1' } }),
        req('/h', { headers: { 'Bad Name': 'x' } }),
        req('/m', { method: 'GE T' }),
      ];
      for (const request of bad) {
        await expect(transport.send(request, OPTS)).resolves.toMatchObject({
          kind: 'network-error',
        });
      }
      expect(sink.requests).toHaveLength(0);
    });

    it('aborts mid-request: result aborted and the server sees the close', async () => {
      sink.setScript(() => ({ hang: true }));
      const controller = new AbortController();
      const pending = transport.send(req('/abort'), { ...OPTS, signal: controller.signal });
      const [got] = await sink.waitForRequests(1);
      controller.abort();
      await expect(pending).resolves.toEqual({ kind: 'aborted' });
      await expect(got?.whenClosed).resolves.toBeGreaterThan(0);
    });

    it('sends nothing when the signal is already aborted', async () => {
      const result = await transport.send(req('/never'), { ...OPTS, signal: AbortSignal.abort() });
      expect(result).toEqual({ kind: 'aborted' });
      await transport.send(req('/after'), OPTS);
      expect(sink.requests.map((r) => r.url)).toEqual(['/after']);
    });
  });

  describe('connections', () => {
    it('a keep-alive transport reuses its connections; the default one does not', async () => {
      const pooled = make({ keepAlive: true, maxSockets: 4 });
      try {
        for (const path of ['/k1', '/k2', '/k3', '/k4']) await pooled.send(req(path), OPTS);
      } finally {
        await pooled.close?.();
      }
      await transport.send(req('/d1'), OPTS);
      await transport.send(req('/d2'), OPTS);
      const [k1, k2, k3, k4, d1, d2] = sink.requests;
      expect(k1?.headers.connection).toBe('keep-alive');
      // node's agent frees a connection before the next send; undici's pool frees it a tick
      // after the response, so back-to-back sends alternate between two connections
      const used = new Set([k1, k2, k3, k4].map((k) => k?.connectionId));
      if (alwaysKeepAlive) expect(used.size).toBeLessThanOrEqual(2);
      else expect(used.size).toBe(1);
      expect(k3?.connectionId).toBe(k1?.connectionId);
      expect(k3?.remotePort).toBe(k1?.remotePort);
      if (alwaysKeepAlive) return; // undici's transport is the daemon's: keep-alive only
      expect(d1?.headers.connection).toBe('close');
      expect(d2?.remotePort).not.toBe(d1?.remotePort);
      expect(d2?.connectionId).not.toBe(d1?.connectionId);
    });

    it('maxSockets bounds the requests in flight; the rest wait in order, counted by backlog(), the deadline covering the wait', async () => {
      const t = make({ keepAlive: true, maxSockets: 2 });
      try {
        sink.setScript((i) => (i < 2 ? { hang: true } : { status: 200, body: 'ok' }));
        const first = new AbortController();
        const waiting = new AbortController();
        const sends = [0, 1].map((i) => t.send(req(`/b${i}`), { ...OPTS, signal: first.signal }));
        // /b2 gives up while it waits (its deadline covers the wait); /b3 is cancelled waiting
        const late = t.send(req('/b2'), { ...OPTS, timeoutMs: 100 });
        const cancelled = t.send(req('/b3'), { ...OPTS, signal: waiting.signal });
        const rest = [4, 5, 6].map((i) => t.send(req(`/b${i}`), OPTS));
        await sink.waitForRequests(2);
        expect(t.backlog?.()).toBe(5);
        expect(t.inFlight?.()).toBe(7); // two on the wire, five waiting
        await expect(late).resolves.toEqual({ kind: 'timeout' });
        waiting.abort();
        await expect(cancelled).resolves.toEqual({ kind: 'aborted' });
        // (node's agent drops a request that ended while waiting only when it reaches it)
        await new Promise((r) => setTimeout(r, 50));
        expect(sink.requests.map((r) => r.url)).toEqual(['/b0', '/b1']); // still only two
        first.abort(); // the two hanging ones end: the waiting ones go, in order
        expect((await Promise.all(sends)).map((r) => r.kind)).toEqual(['aborted', 'aborted']);
        expect((await Promise.all(rest)).map((r) => r.kind)).toEqual([
          'response',
          'response',
          'response',
        ]);
        expect(sink.requests.map((r) => r.url)).toEqual(['/b0', '/b1', '/b4', '/b5', '/b6']);
        expect(t.backlog?.()).toBe(0);
        expect(t.inFlight?.()).toBe(0);
      } finally {
        await t.close?.();
      }
    });

    // Every outcome in turn; the last one for each action is checked against its result kind.
    const CYCLE: { action: SinkAction; kind: string }[] = [
      { action: { status: 200, body: 'ok' }, kind: 'response' },
      { action: { status: 503 }, kind: 'response' },
      { action: { drop: true }, kind: 'network-error' },
      { action: { bigBody: 1024 * 1024 }, kind: 'response' },
      { action: { hang: true }, kind: 'timeout' },
      { action: { status: 302, headers: { location: '/x' } }, kind: 'response' },
      { action: { hang: true, status: 200, partialBody: 'p' }, kind: 'timeout' },
    ];

    it.each([false, true])(
      '50 sequential sends leave no socket open (keepAlive: %s)',
      async (keepAlive) => {
        const t = make({ keepAlive });
        sink.setScript((i) => (CYCLE[i % CYCLE.length] as (typeof CYCLE)[number]).action);
        const kinds: string[] = [];
        for (let i = 0; i < 50; i++) {
          const aborted = i % 11 === 10 ? AbortSignal.abort() : undefined;
          const r = await t.send(req(`/loop/${i}`), {
            timeoutMs: 100,
            maxBodyBytes: KIB64,
            signal: aborted,
          });
          kinds.push(r.kind);
        }
        await t.close?.();
        await sink.waitForOpenConnections(0);
        let served = 0;
        kinds.forEach((kind, i) => {
          if (i % 11 === 10) return expect(kind).toBe('aborted');
          const expected = (CYCLE[served % CYCLE.length] as (typeof CYCLE)[number]).kind;
          served++;
          expect(kind, `send ${i}`).toBe(expected);
        });
        expect(sink.requests).toHaveLength(served);
      },
    );
  });
});
