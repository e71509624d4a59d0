/**
 * The HTTP edge of a real daemon (in-process, real server, real sockets): every request gets an
 * answer even when the client half-closes its side after sending (finding 18: Node's
 * `httpAllowHalfOpen` defaults to false, and a request whose handler awaits was dropped).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;

beforeAll(async () => {
  sink = await startSink((_, r) => (r.url === '/hang' ? { hang: true } : { status: 200 }));
  const dir = mkdtempSync(join(tmpdir(), 'cronix-edges-'));
  const file = join(dir, 'manifest.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      app: 'edge',
      jobs: [
        {
          name: 'hang',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/hang` },
          policy: { timeout_seconds: 600 },
          auth: { secret_refs: ['env:EDGE_SECRET'] },
        },
      ],
    }),
  );
  daemon = await startDaemon({
    manifests: [file],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { EDGE_SECRET: 'edge-secret-0123456789' },
  });
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

/** Sends `head` on a raw socket, half-closes it, and reads everything until the server closes. */
function halfClosedExchange(head: string): Promise<string> {
  const { hostname, port } = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (got += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    socket.on('connect', () => {
      socket.write(head);
      socket.end(); // FIN after the request: the client will send nothing more
    });
  });
}

describe('half-closed clients', () => {
  it('POST /runs/{id}/cancel of a running run, empty body, Connection: close, FIN sent: answered', async () => {
    const res = await fetch(`${daemon.url}/api/v1/jobs/edge/hang/trigger`, {
      method: 'POST',
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect(res.status).toBe(202);
    const { run } = (await res.json()) as { run: { id: string } };
    await sink.waitForRequests(1); // the attempt is in flight: the run is running
    const { host } = new URL(daemon.url);
    const answer = await halfClosedExchange(
      `POST /api/v1/runs/${run.id}/cancel HTTP/1.1\r\nHost: ${host}\r\n` +
        `Authorization: Bearer ${daemon.token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"outcome":"stopped"');
  });

  it('a GET that awaits the store is answered too', async () => {
    const { host } = new URL(daemon.url);
    const answer = await halfClosedExchange(
      `GET /api/v1/runs HTTP/1.1\r\nHost: ${host}\r\n` +
        `Authorization: Bearer ${daemon.token}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"runs"');
  });
});
