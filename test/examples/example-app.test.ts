/**
 * Starts examples/app/server.ts as a real child process on a free port and
 * talks to it over HTTP: manifest, a signed trigger (200) and tampered ones (401).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/contract/signature.js';
import { freePort } from '../helpers/common.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SECRET = 'example-app-test-secret';

let child: ChildProcess;
let base: string;
const output: string[] = [];

function waitForListening(proc: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start in ${timeoutMs} ms:\n${output.join('')}`)),
      timeoutMs,
    );
    // Registered after the listener that appends to `output`, so `output` is current here.
    proc.stdout?.on('data', () => {
      if (output.join('').includes('"event":"listening"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited early with ${code}:\n${output.join('')}`));
    });
  });
}

function signedPost(pathname: string, body: string, runId: string): Request {
  const header = sign({
    secret: SECRET,
    method: 'POST',
    path: pathname,
    body,
    timestamp: Math.floor(Date.now() / 1000),
  });
  return new Request(base + pathname, {
    method: 'POST',
    body,
    headers: { 'X-Cron-Signature': header, 'X-Cron-Run-Id': runId, 'X-Cron-Attempt': '1' },
  });
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, ['--import', 'tsx', 'examples/app/server.ts'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port), CRON_SECRET: SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
  await waitForListening(child, 20_000);
});

afterAll(async () => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
});

describe('example app (child process)', () => {
  it('serves its canonical manifest to a signed GET', async () => {
    const pathname = '/.well-known/cron-manifest';
    const header = sign({
      secret: SECRET,
      method: 'GET',
      path: pathname,
      timestamp: Math.floor(Date.now() / 1000),
    });
    const response = await fetch(base + pathname, { headers: { 'X-Cron-Signature': header } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const manifest = (await response.json()) as {
      app: string;
      jobs: { name: string; timezone: string; request: { url: string } }[];
    };
    expect(manifest.app).toBe('example-app');
    expect(manifest.jobs.map((j) => [j.name, j.timezone, j.request.url])).toEqual([
      ['hello', 'UTC', `${base}/jobs/hello`],
      ['nightly-report', 'Europe/Berlin', `${base}/jobs/nightly-report`],
    ]);
  });

  it('refuses an unsigned manifest GET', async () => {
    const response = await fetch(`${base}/.well-known/cron-manifest`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 'MissingSignature' } });
  });

  it('runs a correctly signed trigger and logs its run id and attempt', async () => {
    const response = await fetch(signedPost('/jobs/hello', '', 'run-ok-1'));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      ok: true,
      job: 'hello',
      run_id: 'run-ok-1',
      attempt: 1,
    });
    const report = await fetch(
      signedPost('/jobs/nightly-report', '{"report":"daily"}', 'run-ok-2'),
    );
    expect(await report.json()).toMatchObject({ ok: true, received_bytes: 18 });
    await expect.poll(() => output.join('')).toContain('"run_id":"run-ok-2"');
    expect(output.join('')).toMatch(/"event":"run","job":"hello","run_id":"run-ok-1","attempt":1/);
  });

  it('rejects a tampered trigger with 401 and the error shape', async () => {
    const good = signedPost('/jobs/hello', 'original', 'run-bad');
    const tampered = new Request(good.url, {
      method: 'POST',
      headers: good.headers,
      body: 'tampered',
    });
    const response = await fetch(tampered);
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('SignatureMismatch');
    expect(body.error.message).not.toContain(SECRET);
    expect(output.join('')).not.toContain(SECRET);
  });
});
