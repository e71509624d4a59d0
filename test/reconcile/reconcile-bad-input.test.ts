/**
 * Bad input through the built binary: manifest sources (unreachable URL → 1, bad signature → 4
 * against a real server verifying with the contract's `verify`, invalid manifest → 1 with every
 * path, non-loopback http → 2), an unwritable target (1, nothing half-written), a missing
 * crontab(1) (3), and bad flags (2).
 */
import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../src/contract/signature.js';
import { freePort } from '../helpers/sink.js';
import { selfSignedCert } from '../helpers/tls.js';
import {
  cronixAsync,
  manifestOf,
  startManifestServer,
  workspace,
  type ManifestServer,
} from './cli-helpers.js';

const SECRET = 'manifest-fetch-secret';
const env = { ...process.env, MANIFEST_SECRET: SECRET, WRONG_SECRET: 'nope' };
const run = (args: string[]) => cronixAsync(args, env);

describe('manifest sources', () => {
  let server: ManifestServer;
  beforeAll(async () => {
    server = await startManifestServer(SECRET, JSON.stringify(manifestOf('billing', ['settle'])));
  });
  afterAll(async () => server.close());

  it('fetches a loopback http:// manifest with a signed GET that the server verifies', async () => {
    const ws = workspace();
    const r = await run([
      'apply',
      `${server.url}/manifest?v=1`,
      '--secret-ref',
      'env:MANIFEST_SECRET',
      ...ws.flags,
    ]);
    expect(r.status).toBe(0);
    expect(server.requests.at(-1)).toMatchObject({ path: '/manifest?v=1', verified: true });
    expect(server.requests.at(-1)?.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(readFileSync(ws.crontab, 'utf8')).toContain('trigger billing.settle');
    // --secret-ref also replaces the job's refs in the spec file
    const spec = JSON.parse(readFileSync(`${ws.specDir}/billing.settle.json`, 'utf8')) as {
      secret_refs: string[];
    };
    expect(spec.secret_refs).toEqual(['env:MANIFEST_SECRET']);
  });

  it('exits 4 when the server rejects the signature (wrong secret, or none)', async () => {
    const ws = workspace();
    const wrong = await run([
      'plan',
      `${server.url}/manifest`,
      '--secret-ref',
      'env:WRONG_SECRET',
      ...ws.flags,
    ]);
    expect(wrong.status).toBe(4);
    expect(wrong.stderr).toMatch(
      /answered 401.*did not accept the request signature.*--secret-ref/,
    );
    expect(server.requests.at(-1)?.verified).toBe(false);
    const unsigned = await run(['plan', `${server.url}/manifest`, ...ws.flags, '-o', 'json']);
    expect(unsigned.status).toBe(4);
    expect(JSON.parse(unsigned.stdout)).toMatchObject({ error: { exit_code: 4 } });
    expect(unsigned.stderr).toMatch(/unsigned/);
  });

  it('exits 1 for an unreachable manifest URL', async () => {
    const port = await freePort();
    const r = await run([
      'plan',
      `http://127.0.0.1:${port}/manifest`,
      '--secret-ref',
      'env:MANIFEST_SECRET',
      ...workspace().flags,
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/cannot fetch http:\/\/127\.0\.0\.1:\d+\/manifest: ECONNREFUSED/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('refuses plain http to a non-loopback host (exit 2) and unknown schemes', async () => {
    const r = await run(['plan', 'http://example.com/manifest', ...workspace().flags]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/plain http is allowed on loopback only.*use https:\/\//);
    expect((await run(['plan', 'ftp://example.com/m.json', ...workspace().flags])).status).toBe(2);
  });

  it('exits 1 for an invalid manifest, listing every error with its path', async () => {
    const ws = workspace();
    const m = ws.manifest({
      version: 1,
      app: 'Billing',
      jobs: [
        { name: 'a', schedule: '61 * * * *', request: { url: 'https://x.example/a' } },
        {
          name: 'a',
          schedule: '* * * * *',
          request: { url: 'ftp://x' },
          policy: { timeout_seconds: 0 },
        },
      ],
    });
    const r = await run(['apply', m, ...ws.flags]);
    expect(r.status).toBe(1);
    for (const path of [
      'app',
      'jobs/0/schedule',
      'jobs/1/name',
      'jobs/1/request/url',
      'jobs/1/policy/timeout_seconds',
    ]) {
      expect(r.stderr).toContain(`  ${path}: `);
    }
    const json = await run(['plan', `file://${m}`, ...ws.flags, '-o', 'json']);
    expect(json.status).toBe(1);
    const doc = JSON.parse(json.stdout) as { error: { errors: { path: string }[] } };
    expect(doc.error.errors.map((e) => e.path)).toEqual(
      expect.arrayContaining(['app', 'jobs/0/schedule', 'jobs/1/name']),
    );
    expect(() => statSync(ws.crontab)).toThrow();
    expect((await run(['plan', `${ws.dir}/missing.json`, ...ws.flags])).stderr).toMatch(
      /no such file/,
    );
  });
});

describe('command jobs from a URL (SPEC §11)', () => {
  const withCommand = manifestOf('ops', [
    'ping',
    { name: 'backup', schedule: '0 3 * * *', command: { argv: ['/usr/local/bin/backup'] } },
  ]);
  let server: ManifestServer;
  beforeAll(async () => {
    server = await startManifestServer(SECRET, JSON.stringify(withCommand));
  });
  afterAll(async () => server.close());

  it('a fetched manifest holding a command job is refused with the reason, exit 1, nothing written', async () => {
    const ws = workspace();
    const r = await run([
      'apply',
      `${server.url}/manifest`,
      '--secret-ref',
      'env:MANIFEST_SECRET',
      ...ws.flags,
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `jobs/1/command: command jobs are accepted only from local manifest files, and this manifest was fetched from ${server.url}/manifest`,
    );
    expect(server.requests.at(-1)?.verified).toBe(true); // fetched fine, then refused
    expect(() => statSync(ws.crontab)).toThrow();
    expect(() => readdirSync(ws.specDir)).toThrow(); // not even created
  });

  it('the same manifest from a file is accepted: the command job runs through cronix trigger', async () => {
    const ws = workspace();
    const r = await run(['apply', ws.manifest(withCommand), ...ws.flags]);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(ws.crontab, 'utf8')).toContain('trigger ops.backup');
    const spec = JSON.parse(readFileSync(`${ws.specDir}/ops.backup.json`, 'utf8')) as {
      job: { command: { argv: string[] }; request?: unknown };
    };
    expect(spec.job.command.argv).toEqual(['/usr/local/bin/backup']);
    expect(spec.job.request).toBeUndefined();
  });
});

describe('fetch limits', () => {
  it('does not follow redirects and caps the body at 10 MiB (exit 1 each)', async () => {
    const server = createHttpServer((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: 'https://elsewhere.example/m.json' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 11; i++) res.write(chunk);
      res.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const moved = await run(['plan', `http://localhost:${port}/moved`, ...workspace().flags]);
      expect(moved.status).toBe(1);
      expect(moved.stderr).toMatch(
        /answered 302 redirecting to https:\/\/elsewhere\.example\/m\.json; redirects are not followed/,
      );
      const big = await run(['plan', `http://127.0.0.1:${port}/big`, ...workspace().flags]);
      expect(big.status).toBe(1);
      expect(big.stderr).toMatch(/larger than 10 MiB/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('fetches https:// with the system CAs plus NODE_EXTRA_CA_CERTS (a self-signed server)', async () => {
    const ws = workspace();
    const tls = selfSignedCert(ws.dir);
    const body = JSON.stringify(manifestOf('billing', ['settle']));
    const server = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const ok = verify({
        header: req.headers['x-cron-signature'] as string | undefined,
        secrets: [SECRET],
        method: 'GET',
        path: req.url ?? '',
        now: Date.now() / 1000,
      }).ok;
      res.writeHead(ok ? 200 : 401);
      res.end(ok ? body : 'no');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const r = await cronixAsync(
        [
          'plan',
          `https://localhost:${port}/.well-known/cron-manifest`,
          '--secret-ref',
          'env:MANIFEST_SECRET',
          ...ws.flags,
          '-o',
          'json',
        ],
        {
          ...env,
          NODE_EXTRA_CA_CERTS: tls.certPath,
        },
      );
      expect(r.stderr.split('\n').filter((l) => l !== '' && !/"level":"warning"/.test(l))).toEqual(
        [],
      );
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ app: 'billing', summary: { create: 1 } });
      const untrusted = await run([
        'plan',
        `https://localhost:${port}/m`,
        '--secret-ref',
        'env:MANIFEST_SECRET',
        ...ws.flags,
      ]);
      expect(untrusted.status).toBe(1);
      expect(untrusted.stderr).toMatch(/cannot fetch https:\/\/localhost:\d+\/m: \w+/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('targets and flags', () => {
  it('an unwritable target: exit 1, a clear message, nothing half-written (spec files put back)', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle']));
    const r = await run(['apply', m, ...ws.flags, '--crontab-path', '/proc/cronix-test-target']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^error: cannot write crontab \/proc\/cronix-test-target: \w+ \(nothing was changed\)/m,
    );
    expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: '))).toHaveLength(
      1,
    );
    expect(readdirSync(ws.specDir).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('exits 3 when crontab(1) cannot be found for the user crontab', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle']));
    const r = await cronixAsync(['plan', m, '--spec-dir', ws.specDir, '--cron-timezone', 'UTC'], {
      ...env,
      PATH: '/nonexistent',
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/crontab\(1\) is not installed/);
  });

  it('exits 2 for bad flags, naming the flag and the fix', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle']));
    const dotted = await run([
      'plan',
      m,
      '--spec-dir',
      ws.specDir,
      '--crontab-path',
      '/etc/cron.d/cronix.jobs',
    ]);
    expect(dotted.status).toBe(2);
    expect(dotted.stderr).toMatch(/ignores files in \/etc\/cron\.d whose names contain dots/);
    expect((await run(['plan', m, ...ws.flags, '--backend', 'at'])).status).toBe(2);
    expect((await run(['plan', m, ...ws.flags, '-o', 'yaml'])).status).toBe(2);
    expect(
      (await run(['plan', m, ...ws.flags, '--trigger-bin', '/no/such/cronix'])).stderr,
    ).toMatch(/--trigger-bin/);
    expect((await run(['plan', m, ...ws.flags, '--cron-timezone', 'Mars/Base'])).status).toBe(2);
  });
});
