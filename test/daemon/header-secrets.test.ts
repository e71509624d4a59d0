/**
 * Credentials in a job's request never show (finding 5): static header values are shown only for
 * an allowlist of names, query values likewise, and `request.headers_from_secrets` carries
 * secret headers that are resolved at start-up, sent on every attempt, never shown and redacted
 * from errors. A real `cronix serve` with a real sink, and an in-process daemon whose transport
 * echoes the secret back in its error.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../src/http/serve.js';
import type { Transport, TransportRequest } from '../../src/fire/types.js';
import { api, manifestDir, spawnServe, until, type Served } from '../helpers/serve.js';
import { sequence, startSink, type Sink } from '../helpers/sink.js';

const STATIC = {
  'X-Upstream-Key': 'static-upstream-1',
  'X-Auth-Key': 'static-auth-key-1',
  'X-Access-Key': 'static-access-1',
  'X-Private-Key': 'static-private-1',
  'Ocp-Apim-Subscription-Key': 'static-apim-1',
  'X-Auth': 'static-x-auth-1',
  'Content-Type': 'application/json',
  'User-Agent': 'cron-test/1',
};
const QUERY = '?key=query-key-1&page=2&auth=query-auth-1';
const UPSTREAM_KEY = 'upstream-api-key-from-env-1';
const VAULT = 'vault-token-from-file-1';
const ALL_SECRETS = [
  ...Object.values(STATIC).filter((v) => v.startsWith('static-')),
  'query-key-1',
  'query-auth-1',
  UPSTREAM_KEY,
  VAULT,
];

let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});

function writeJob(dir: string, vaultFile: string): void {
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'hs',
      jobs: [
        {
          name: 'up',
          schedule: '0 0 1 1 *',
          request: {
            url: `${sink.url}/h${QUERY}`,
            headers: STATIC,
            headers_from_secrets: {
              'X-Api-Key': 'env:UPSTREAM_KEY',
              'X-Vault': `file:${vaultFile}`,
            },
          },
          policy: { retries: { max_attempts: 3, min_seconds: 0, max_seconds: 1 } },
          auth: { secret_refs: ['env:CRON_SECRET'] },
        },
      ],
    }),
  );
}

function expectNoSecret(text: string, where: string): void {
  for (const s of ALL_SECRETS) expect(text, `${where} shows ${s}`).not.toContain(s);
}

describe('cronix serve', () => {
  let s: Served;
  let dir: string;

  beforeAll(async () => {
    dir = manifestDir('hs', []);
    const vaultFile = join(dir, 'vault');
    writeFileSync(vaultFile, `${VAULT}\n`, { mode: 0o600 });
    writeJob(dir, vaultFile);
    s = await spawnServe(dir, 0, {
      env: {
        PATH: process.env['PATH'],
        CRON_SECRET: 'header-secrets-0123456789',
        UPSTREAM_KEY,
      },
    });
  });
  afterAll(async () => {
    s.child.kill('SIGTERM');
    await s.exited;
  });

  it('sends the headers from secrets on every attempt', async () => {
    sink.setScript(sequence([503, 503, 200]));
    const before = sink.requests.length;
    const t = await api(s, 'POST', '/api/v1/jobs/hs/up/trigger');
    const id = (t.json['run'] as { id: string }).id;
    const run = await until(async () => {
      const r = (await api(s, 'GET', `/api/v1/runs/${id}`)).json;
      return r['phase'] === 'ended' ? r : undefined;
    });
    expect(run).toMatchObject({ outcome: 'success', attempts: 3 });
    const sent = sink.requests.slice(before);
    expect(sent).toHaveLength(3);
    for (const r of sent) {
      expect(r.headers['x-api-key']).toBe(UPSTREAM_KEY);
      expect(r.headers['x-vault']).toBe(VAULT);
      expect(r.headers['x-upstream-key']).toBe('static-upstream-1');
    }
  });

  it('the job, a run and its request show no credential: allowlisted values only', async () => {
    const job = await api(s, 'GET', '/api/v1/jobs/hs/up');
    expectNoSecret(JSON.stringify(job.json), 'GET /api/v1/jobs/hs/up');
    const request = job.json['request'] as {
      url: string;
      headers: Record<string, string>;
      headers_from_secrets: string[];
    };
    expect(request.url).toBe(`${sink.url}/h?key=hidden&page=2&auth=hidden`);
    expect(request.headers).toMatchObject({
      'Content-Type': 'application/json',
      'User-Agent': 'cron-test/1',
      'X-Upstream-Key': '(hidden)',
      'Ocp-Apim-Subscription-Key': '(hidden)',
      'X-Api-Key': '(hidden)',
      'X-Vault': '(hidden)',
    });
    expect(request.headers_from_secrets).toEqual(['X-Api-Key', 'X-Vault']);
    const runs = await api(s, 'GET', '/api/v1/runs?app=hs');
    expectNoSecret(JSON.stringify(runs.json), 'GET /api/v1/runs');
    const id = (runs.json['runs'] as { id: string }[])[0]!.id;
    const sent = await api(s, 'GET', `/api/v1/runs/${id}/request`);
    expectNoSecret(JSON.stringify(sent.json), 'GET /api/v1/runs/{id}/request');
    expect(sent.json['headers']).toMatchObject({
      'X-Api-Key': '(hidden)',
      'X-Vault': '(hidden)',
      'X-Auth': '(hidden)',
      'Content-Type': 'application/json',
      'X-Cron-Signature': '(hidden)',
    });
  });

  it('an unresolvable ref stops the start-up, naming job, header and ref', async () => {
    const other = await spawnServe(dir, 0, {
      env: { PATH: process.env['PATH'], CRON_SECRET: 'header-secrets-0123456789' },
      dataDir: join(dir, 'data-missing'),
      waitListening: false,
    });
    const { code } = await other.exited;
    expect(code).toBe(1);
    expect(other.output()).toContain(
      'job hs/up: request.headers_from_secrets X-Api-Key: secret ref env:UPSTREAM_KEY: env var UPSTREAM_KEY is not set',
    );
  });
});

describe('errors', () => {
  it('a header secret echoed in an attempt error is redacted from the run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-hs-'));
    writeJob(dir, join(dir, 'vault'));
    writeFileSync(join(dir, 'vault'), VAULT, { mode: 0o600 });
    const seen: TransportRequest[] = [];
    // a proxy that repeats the request's key in its error
    const transport: Transport = {
      send(req) {
        seen.push(req);
        return Promise.resolve({
          kind: 'network-error',
          message: `proxy refused key ${req.headers['X-Api-Key']} and ${req.headers['X-Vault']}`,
        });
      },
    };
    const d = await startDaemon({
      manifests: [join(dir, 'manifest.json')],
      dataDir: join(dir, 'data'),
      listen: '127.0.0.1:0',
      env: { CRON_SECRET: 'header-secrets-0123456789', UPSTREAM_KEY },
      transport,
    });
    try {
      const { run } = await d.scheduler.trigger('hs', 'up');
      const ended = await new Promise<unknown>((resolve) =>
        d.scheduler.events.on('run-ended', (r) => r.id === run.id && resolve(r)),
      );
      expect(seen).toHaveLength(3);
      const text = JSON.stringify(ended);
      expect(text).toContain('proxy refused key [REDACTED] and [REDACTED]');
      expectNoSecret(text, 'the ended run');
      const shown = await fetch(`${d.url}/api/v1/runs/${run.id}`, {
        headers: { authorization: `Bearer ${d.token}` },
      });
      expectNoSecret(await shown.text(), 'GET /api/v1/runs/{id}');
    } finally {
      await d.stop(1000);
    }
  });
});
