/**
 * Helpers for the reconciler's CLI tests: the built binary run asynchronously (so a server in
 * the test process can answer it), manifests on disk, and a manifest server that verifies the
 * signed GET with the contract's `verify`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIGNATURE_HEADER, verify } from '../../src/contract/signature.js';
import { CLI, REPO_ROOT, type CliResult } from '../helpers/cli.js';

/** Runs `cronix ...args` without blocking the event loop. */
export function cronixAsync(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A fresh temp workspace: a crontab path, a spec dir, and a place for manifests. */
export interface Workspace {
  dir: string;
  crontab: string;
  specDir: string;
  /** Writes a manifest file and returns its path. */
  manifest(value: unknown, name?: string): string;
  /** The standard flags: `--crontab-path`, `--spec-dir`, `--trigger-bin`, `--cron-timezone UTC`. */
  flags: string[];
}

/** Creates a workspace under the temp dir. */
export function workspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-cli-'));
  const crontab = join(dir, 'crontab');
  const specDir = join(dir, 'jobs');
  return {
    dir,
    crontab,
    specDir,
    manifest(value, name = 'manifest.json') {
      const path = join(dir, name);
      writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
      return path;
    },
    flags: [
      '--crontab-path',
      crontab,
      '--spec-dir',
      specDir,
      '--trigger-bin',
      CLI,
      '--cron-timezone',
      'UTC',
    ],
  };
}

/** A plain v1 manifest with the named jobs (every 10 minutes, signed with env:CRON_SECRET). */
export function manifestOf(
  app: string,
  jobs: readonly (string | Record<string, unknown>)[],
): Record<string, unknown> {
  return {
    version: 1,
    app,
    jobs: jobs.map((j) =>
      typeof j === 'string'
        ? {
            name: j,
            schedule: '*/10 * * * *',
            request: { url: `https://${app}.example.internal/${j}` },
            auth: { secret_refs: ['env:CRON_SECRET'] },
          }
        : j,
    ),
  };
}

/** A manifest server: answers `GET /manifest` with `body` when the signature verifies, else 401. */
export interface ManifestServer {
  url: string;
  requests: { path: string; signature: string | undefined; verified: boolean }[];
  close(): Promise<void>;
}

/** Starts a manifest server on 127.0.0.1 that accepts signatures made with `secret`. */
export async function startManifestServer(secret: string, body: string): Promise<ManifestServer> {
  const requests: ManifestServer['requests'] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const header = req.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined;
    const result = verify({
      header,
      secrets: [secret],
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      now: Date.now() / 1000,
    });
    requests.push({ path: req.url ?? '', signature: header, verified: result.ok });
    if (!result.ok) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: result.code }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
