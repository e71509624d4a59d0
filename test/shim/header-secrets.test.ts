/**
 * `request.headers_from_secrets` in `cronix trigger` (finding 5), as a real process against a
 * real sink: the headers are resolved when the shim starts, sent on every attempt, and their
 * values never reach its log lines (a response that echoes one is redacted); a ref that does not
 * resolve is exit 3, naming the header and the ref.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sequence, startSink, type Sink } from '../helpers/sink.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';

const KEY = 'shim-upstream-key-0001';
let sink: Sink;

beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});

function job(): ReturnType<typeof shimDirs> {
  const dirs = shimDirs();
  writeSpec(
    dirs.specDir,
    'app',
    normalizedJob('app', {
      name: 'keyed',
      schedule: '*/5 * * * *',
      request: {
        url: `${sink.url}/keyed`,
        headers: { 'Content-Type': 'text/plain' },
        headers_from_secrets: { 'X-Api-Key': 'env:UPSTREAM_KEY' },
      },
      policy: { timeout_seconds: 2, retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 } },
    }),
  );
  return dirs;
}

it('sent on every attempt; an echo of it in a response is redacted from the log', async () => {
  const dirs = job();
  sink.setScript(
    sequence([
      { status: 503, body: `no access for key ${KEY}` },
      { status: 503, body: `still no access for key ${KEY}` },
    ]),
  );
  const before = sink.requests.length;
  const run = await runShim('app.keyed', dirArgs(dirs), { UPSTREAM_KEY: KEY });
  expect(run.code).not.toBe(0);
  const sent = sink.requests.slice(before);
  expect(sent).toHaveLength(2);
  for (const r of sent) expect(r.headers['x-api-key']).toBe(KEY);
  expect(run.stdout).toContain('[REDACTED]');
  expect(run.stdout + run.stderr).not.toContain(KEY);
});

it('an unresolvable ref is exit 3 naming the header and the ref', async () => {
  const dirs = job();
  const before = sink.requests.length;
  const run = await runShim('app.keyed', dirArgs(dirs));
  expect(run.code).toBe(3);
  expect(run.stdout).toContain(
    'request.headers_from_secrets X-Api-Key: secret ref env:UPSTREAM_KEY: env var UPSTREAM_KEY is not set',
  );
  expect(sink.requests.length).toBe(before);
});
