/** defineApp(...).toManifest() and manifestHandler against the real manifest contract. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalize, parseManifest } from '../../src/contract/manifest/index.js';
import { sign } from '../../src/contract/signature.js';
import {
  InvalidManifestError,
  MANIFEST_PATH,
  defineApp,
  manifestHandler,
} from '../../src/sdk/index.js';
import { declareExampleJobs } from '../../examples/app/app.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NOW = 1_800_000_000;

function billing() {
  return defineApp('billing-service', {
    baseUrl: 'https://billing.internal/',
    secretRefs: ['env:CRON_SECRET', 'file:/run/secrets/old'],
  })
    .job({
      name: 'settle-invoices',
      schedule: '*/10 * * * *',
      path: '/api/v1/scheduled/settle-invoices',
      policy: { concurrency: 'Forbid', concurrency_scope: 'global', timeout_seconds: 300 },
    })
    .job({
      name: 'archive',
      schedules: ['0 3 * * *', '@weekly'],
      timezone: 'Europe/Berlin',
      url: 'https://archive.internal/run?full=1',
      method: 'PUT',
      headers: { 'x-b': '2', 'x-a': '1' },
      body: '{"full":true}',
      secretRefs: ['raw:only-for-archive'],
    });
}

describe('defineApp', () => {
  it('builds the normalized manifest through parseManifest', () => {
    const manifest = billing().toManifest();
    expect(manifest.app).toBe('billing-service');
    expect(manifest.jobs.map((j) => j.name)).toEqual(['archive', 'settle-invoices']);
    const [archive, settle] = manifest.jobs;
    expect(settle).toMatchObject({
      schedules: ['*/10 * * * *'],
      timezone: 'UTC',
      request: {
        method: 'POST',
        url: 'https://billing.internal/api/v1/scheduled/settle-invoices',
        headers: {},
        body: '',
      },
      policy: { concurrency: 'Forbid', concurrency_scope: 'global', timeout_seconds: 300 },
      auth: { secret_refs: ['env:CRON_SECRET', 'file:/run/secrets/old'] },
    });
    expect(archive).toMatchObject({
      schedules: ['0 3 * * *', '@weekly'],
      timezone: 'Europe/Berlin',
      request: { method: 'PUT', url: 'https://archive.internal/run?full=1', body: '{"full":true}' },
      auth: { secret_refs: ['raw:only-for-archive'] },
    });
  });

  it('round-trips: canonical JSON parses back to the same manifest', () => {
    const manifest = billing().toManifest();
    const canonical = canonicalize(manifest);
    const reparsed = parseManifest(JSON.parse(canonical));
    expect(reparsed.ok).toBe(true);
    if (reparsed.ok) {
      expect(reparsed.manifest).toEqual(manifest);
      expect(canonicalize(reparsed.manifest)).toBe(canonical);
    }
  });

  it('matches examples/manifest.json for the example app on port 8080', () => {
    const fromFile = parseManifest(
      JSON.parse(readFileSync(path.join(repoRoot, 'examples/manifest.json'), 'utf8')),
    );
    expect(fromFile.ok).toBe(true);
    if (fromFile.ok) {
      const fromCode = declareExampleJobs('http://127.0.0.1:8080').toManifest();
      expect(canonicalize(fromCode)).toBe(canonicalize(fromFile.manifest));
    }
  });

  it('throws one error listing every problem', () => {
    const app = defineApp('Bad_App')
      .job({ name: 'ok', schedule: '* * * * *', url: 'https://x.example/ok' })
      .job({ name: 'needs-base', schedule: '* * * * *', path: '/x' })
      .job({ name: 'ok', schedule: '* * * * *', url: 'ftp://nope' });
    let caught: unknown;
    try {
      app.toManifest();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidManifestError);
    const error = caught as InvalidManifestError;
    const paths = error.errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['app', 'jobs/1/request/url', 'jobs/2/name', 'jobs/2/request/url']),
    );
    for (const e of error.errors) expect(error.message).toContain(`${e.path}: ${e.message}`);
  });

  it('rejects a job giving both path and url', () => {
    const app = defineApp('a', { baseUrl: 'http://h' }).job({
      name: 'j',
      schedule: '* * * * *',
      path: '/p',
      url: 'http://h/p',
    } as never);
    expect(() => app.toManifest()).toThrow(/jobs\/0\/request\/url: give either path or url/);
  });
});

describe('manifestHandler', () => {
  const app = billing();
  const canonical = canonicalize(app.toManifest());

  it('serves the canonical JSON', async () => {
    const handler = manifestHandler(app);
    const response = handler(new Request(`http://app.local${MANIFEST_PATH}`));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe(canonical);
  });

  it('answers HEAD without a body, 404 elsewhere and 405 for other methods', async () => {
    const handler = manifestHandler(app);
    const head = handler(new Request(`http://app.local${MANIFEST_PATH}`, { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(handler(new Request('http://app.local/other')).status).toBe(404);
    const post = handler(new Request(`http://app.local${MANIFEST_PATH}`, { method: 'POST' }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('verifies a signed GET when secrets are given', async () => {
    const handler = manifestHandler(app, { secrets: ['old', 'manifest-secret'], now: () => NOW });
    const header = sign({
      secret: 'manifest-secret',
      method: 'GET',
      path: `${MANIFEST_PATH}?v=1`,
      timestamp: NOW,
    });
    const ok = handler(
      new Request(`http://app.local${MANIFEST_PATH}?v=1`, {
        headers: { 'X-Cron-Signature': header },
      }),
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe(canonical);

    const unsigned = handler(new Request(`http://app.local${MANIFEST_PATH}`));
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toMatchObject({ error: { code: 'MissingSignature' } });

    const wrongQuery = handler(
      new Request(`http://app.local${MANIFEST_PATH}?v=2`, {
        headers: { 'X-Cron-Signature': header },
      }),
    );
    expect(await wrongQuery.json()).toMatchObject({ error: { code: 'SignatureMismatch' } });
  });

  it('fails closed with an empty secret list', () => {
    const handler = manifestHandler(app, { secrets: [], now: () => NOW });
    const header = sign({ secret: 's', method: 'GET', path: MANIFEST_PATH, timestamp: NOW });
    const response = handler(
      new Request(`http://app.local${MANIFEST_PATH}`, { headers: { 'X-Cron-Signature': header } }),
    );
    expect(response.status).toBe(401);
  });

  it('fails at creation for an invalid app', () => {
    expect(() => manifestHandler(defineApp('x'))).toThrow(InvalidManifestError);
  });
});
