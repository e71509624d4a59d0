/**
 * The caps of `GET /api/v1/events` on a real daemon (in-process, real server; finding 8): past
 * the per-client or the overall cap a stream is answered 503 in the §7 shape with Retry-After
 * and `Connection: close`; a closed stream frees its place at once; `cronix_event_streams`
 * counts them; logging out ends the streams of that session. The flood itself, with RSS and an
 * every-second job, is in event-streams-flood.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { manifestDir } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;

beforeAll(async () => {
  sink = await startSink();
  const dir = manifestDir('es', [
    { name: 'a', schedule: '0 0 1 1 *', request: { url: `${sink.url}/a` } },
  ]);
  daemon = await startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(mkdtempSync(join(tmpdir(), 'cronix-es-')), 'data'),
    listen: '127.0.0.1:0',
    env: { CRON_SECRET: 'streams-secret-0123456789' },
    maxEventStreams: 3,
    maxEventStreamsPerClient: 2,
  });
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

/** Opens `GET /api/v1/events` from `localAddress`; resolves with the response head. */
function open(
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<IncomingMessage> {
  const u = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: Number(u.port),
        path: '/api/v1/events',
        localAddress,
        agent: false,
        headers: { authorization: `Bearer ${daemon.token}`, ...headers },
      },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

async function body(res: IncomingMessage): Promise<string> {
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) text += chunk as string;
  return text;
}

async function streams(): Promise<number> {
  const text = await (
    await fetch(`${daemon.url}/metrics`, { headers: { authorization: `Bearer ${daemon.token}` } })
  ).text();
  return Number(/^cronix_event_streams (\d+)$/m.exec(text)?.[1]);
}

it('per client, then overall: 503 in the API error shape, Retry-After, Connection: close', async () => {
  const a1 = await open('127.0.0.1');
  const a2 = await open('127.0.0.1');
  expect([a1.statusCode, a2.statusCode]).toEqual([200, 200]);
  const a3 = await open('127.0.0.1');
  expect(a3.statusCode).toBe(503);
  expect(a3.headers['retry-after']).toBe('5');
  expect(a3.headers['connection']).toBe('close');
  expect(JSON.parse(await body(a3))).toEqual({
    error: {
      code: 'unavailable',
      message:
        'too many event streams open from this address (2, serve --max-event-streams-per-client); close some first',
    },
  });
  const b1 = await open('127.0.0.2');
  expect(b1.statusCode).toBe(200);
  const c1 = await open('127.0.0.3');
  expect(c1.statusCode).toBe(503);
  expect(JSON.parse(await body(c1)).error.message).toContain(
    'too many event streams open (3, serve --max-event-streams)',
  );
  expect(await streams()).toBe(3);
  // a stream that ends frees its place
  b1.destroy();
  await new Promise((r) => b1.once('close', r));
  await expectStreams(2);
  const c2 = await open('127.0.0.3');
  expect(c2.statusCode).toBe(200);
  for (const r of [a1, a2, c2]) r.destroy();
  await expectStreams(0);
  const text = await (
    await fetch(`${daemon.url}/metrics`, { headers: { authorization: `Bearer ${daemon.token}` } })
  ).text();
  expect(text).toMatch(/^cronix_event_streams_refused_total\{cap="client"\} 1$/m);
  expect(text).toMatch(/^cronix_event_streams_refused_total\{cap="total"\} 1$/m);
});

async function expectStreams(n: number): Promise<void> {
  for (let i = 0; i < 200 && (await streams()) !== n; i++)
    await new Promise((r) => setTimeout(r, 10));
  expect(await streams()).toBe(n);
}

it('logging out ends the streams opened with that session', async () => {
  const login = await fetch(`${daemon.url}/api/v1/session`, {
    method: 'POST',
    body: JSON.stringify({ token: daemon.token }),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const res = await fetch(`${daemon.url}/api/v1/events`, { headers: { cookie } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read(); // the opening `ready`
  const out = await fetch(`${daemon.url}/api/v1/session`, {
    method: 'DELETE',
    headers: { cookie },
  });
  expect(out.status).toBe(200);
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
  }
  await expectStreams(0);
});
