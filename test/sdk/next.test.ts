/**
 * `withCronix` in a real Next.js app (App Router, `next dev` with Turbopack): the route handler
 * of test/sdk/fixtures/next-app verifies requests signed by the real `cronix trigger` and the
 * real `cronix serve`, refuses unsigned ones, and reads the verified body and route params.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { freePort, until } from '../helpers/common.js';
import { api, manifestDir, spawnServe, TEST_SECRET as SERVE_SECRET } from '../helpers/serve.js';
import {
  dirArgs,
  normalizedJob,
  runShim,
  shimDirs,
  TEST_SECRET as SHIM_SECRET,
  writeSpec,
} from '../helpers/shim.js';

const APP = join(REPO_ROOT, 'test/sdk/fixtures/next-app');
let next: ChildProcess;
let base = '';
let out = '';

beforeAll(async () => {
  const port = await freePort();
  next = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules/next/dist/bin/next'),
      'dev',
      '-p',
      String(port),
      '-H',
      '127.0.0.1',
    ],
    {
      cwd: APP,
      detached: true, // its own process group: next dev starts workers
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        NEXT_TELEMETRY_DISABLED: '1',
        CRONIX_TEST_SECRETS: `${SHIM_SECRET},${SERVE_SECRET}`,
      },
    },
  );
  next.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  next.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  base = `http://127.0.0.1:${port}`;
  await until(() => (out.includes('Ready') ? true : undefined), 90_000, `next dev: ${out}`);
  // the first request compiles the route
  const first = await fetch(`${base}/jobs/warm`, { method: 'POST', body: '{}' });
  expect(first.status).toBe(401);
}, 180_000);

afterAll(() => {
  if (next.pid !== undefined) process.kill(-next.pid, 'SIGKILL');
});

const job = (name: string): Record<string, unknown> => ({
  name,
  schedule: '0 0 1 1 *',
  request: {
    url: `${base}/jobs/${name}?from=cronix`,
    headers: { 'content-type': 'application/json' },
    body: '{"invoice": 7}',
  },
  policy: { retries: { max_attempts: 1 } },
});

it('refuses an unsigned request with the 401 JSON', async () => {
  const res = await fetch(`${base}/jobs/x`, { method: 'POST', body: '{}' });
  expect(res.status).toBe(401);
  expect(await res.json()).toEqual({
    error: { code: 'MissingSignature', message: 'request has no X-Cron-Signature header' },
  });
});

it('verifies a request signed by the shim', async () => {
  const dirs = shimDirs();
  writeSpec(dirs.specDir, 'nx', normalizedJob('nx', job('by-shim')));
  const run = await runShim('nx.by-shim', dirArgs(dirs));
  expect(run.code, `${run.stdout}\n${out.slice(-2000)}`).toBe(0);
  const success = run.lines.find((l) => l['event'] === 'success');
  expect(success?.['status']).toBe(200);
}, 60_000);

it('verifies a request signed by the daemon, and hands on the body and params', async () => {
  const daemon = await spawnServe(manifestDir('nx', [job('by-daemon')]));
  try {
    const t = await api(daemon, 'POST', '/api/v1/jobs/nx/by-daemon/trigger');
    const id = (t.json['run'] as Record<string, string>)['id'] as string;
    const run = await until(
      async () => {
        const r = (await api(daemon, 'GET', `/api/v1/runs/${id}`)).json;
        return r['phase'] === 'ended' ? r : undefined;
      },
      30_000,
      'the run',
    );
    expect(run['outcome'], JSON.stringify(run)).toBe('success');
    const attempts = run['attempt_log'] as Record<string, unknown>[];
    const answer = JSON.parse(String(attempts.at(-1)?.['response'])) as Record<string, unknown>;
    expect(answer).toEqual({
      job: 'by-daemon',
      runKey: run['run_key'] ?? run['runKey'],
      body: { invoice: 7 },
    });
  } finally {
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }
}, 60_000);
