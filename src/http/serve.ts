/**
 * `cronix serve`: wires the store, the scheduler and the HTTP API into one
 * process, with manifests reloaded on demand (SIGHUP in the CLI) — a bad
 * manifest keeps the old set running and reports every error.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Manifest, ManifestError } from '../contract/manifest/types.js';
import { Scheduler } from '../daemon/scheduler.js';
import type { Store } from '../daemon/store/types.js';
import { systemClock } from '../fire/clock.js';
import { createHttpTransport } from '../fire/http-transport.js';
import type { Clock, Transport } from '../fire/types.js';
import { resolveSecretRefs } from '../secrets/resolve.js';
import { loadManifestFile } from '../source/file.js';
import { createApi } from './api.js';

/** Options of {@link startDaemon}. */
export interface ServeOptions {
  manifests: string[];
  dataDir: string;
  /** `HOST:PORT`. */
  listen: string;
  tokenFile?: string;
  noAuth?: boolean;
  /** Days to keep ended runs; 0 = forever. Default 30. */
  retentionDays?: number;
  clock?: Clock;
  transport?: Transport;
  env?: NodeJS.ProcessEnv;
  /** Opens the store; default SQLite in the data dir. */
  openStore?: (dataDir: string) => Promise<Store>;
}

/** A running daemon. */
export interface DaemonHandle {
  url: string;
  token: string | null;
  scheduler: Scheduler;
  store: Store;
  /** Reloads the manifest files; on any error keeps the old set and returns the errors. */
  reload(): Promise<
    { ok: true; jobs: number } | { ok: false; errors: (ManifestError & { file: string })[] }
  >;
  stop(graceMs?: number): Promise<void>;
}

/** A configuration problem that stops `serve` before it starts (exit 1 or 2). */
export class ServeError extends Error {}

/** Loads every manifest; all errors of all files at once. */
export async function loadManifests(
  files: string[],
): Promise<{ manifests: Manifest[]; errors: (ManifestError & { file: string })[] }> {
  const manifests: Manifest[] = [];
  const errors: (ManifestError & { file: string })[] = [];
  const apps = new Map<string, string>();
  for (const file of files) {
    const r = await loadManifestFile(file);
    if (!r.ok) errors.push(...r.errors.map((e) => ({ ...e, file })));
    else if (apps.has(r.manifest.app))
      errors.push({
        file,
        path: 'app',
        message: `app "${r.manifest.app}" is already defined by ${apps.get(r.manifest.app)}`,
      });
    else {
      apps.set(r.manifest.app, file);
      manifests.push(r.manifest);
    }
  }
  return { manifests, errors };
}

function parseListen(listen: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  const port = Number(m?.[2]);
  if (!m || port > 65535)
    throw new ServeError(
      `--listen: expected HOST:PORT such as 127.0.0.1:7070, found ${JSON.stringify(listen)}`,
    );
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}

const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || /^127\./.test(host);

function loadToken(opts: ServeOptions, dataDir: string): string {
  const file = opts.tokenFile ?? join(dataDir, 'token');
  try {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length < 16)
      throw new ServeError(`token file ${file} holds fewer than 16 characters`);
    return token;
  } catch (err) {
    if (err instanceof ServeError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || opts.tokenFile) {
      throw new ServeError(
        `cannot read token file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
    const token = randomBytes(24).toString('base64url');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    return token;
  }
}

/** Starts the daemon and its HTTP server. */
export async function startDaemon(opts: ServeOptions): Promise<DaemonHandle> {
  const { host, port } = parseListen(opts.listen);
  if (opts.noAuth && !isLoopback(host)) {
    throw new ServeError(
      `--no-auth is only allowed when listening on loopback (127.0.0.1, ::1), not ${host}`,
    );
  }
  const dataDir = resolve(opts.dataDir);
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new ServeError(
      `cannot create data dir ${dataDir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  const loaded = await loadManifests(opts.manifests);
  if (loaded.errors.length > 0) {
    throw new ServeError(
      loaded.errors
        .map((e) => `${e.file}: ${e.path === '' ? '(root)' : e.path}: ${e.message}`)
        .join('\n'),
    );
  }
  const token = opts.noAuth ? null : loadToken(opts, dataDir);
  const openStore =
    opts.openStore ??
    (async (dir: string) => {
      const { openSqliteStore } = await import('../daemon/store/sqlite.js');
      return openSqliteStore(join(dir, 'ledger.sqlite'));
    });
  const store = await openStore(dataDir);
  const env = opts.env ?? process.env;
  const secretCache = new Map<string, string[]>();
  const retentionDays = opts.retentionDays ?? 30;
  const scheduler = new Scheduler({
    store,
    ...(retentionDays > 0 ? { retentionMs: retentionDays * 86_400_000 } : {}),
    clock: opts.clock ?? systemClock,
    transport: opts.transport ?? createHttpTransport({ keepAlive: true, maxSockets: 256 }),
    secretsFor: (job) => {
      const refs = job.job.auth.secret_refs;
      const cacheKey = refs.join('\n');
      let secrets = secretCache.get(cacheKey);
      if (!secrets) {
        secrets = resolveSecretRefs(refs, { env }).secrets;
        secretCache.set(cacheKey, secrets);
      }
      return secrets;
    },
  });
  await scheduler.start(loaded.manifests);
  const app = createApi({ scheduler, store, token });
  const server: ServerType = await new Promise((resolveServer, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolveServer(s));
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ServeError(`cannot listen on ${opts.listen}: ${err.code ?? err.message}`)),
    );
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url,
    token,
    scheduler,
    store,
    async reload() {
      const next = await loadManifests(opts.manifests);
      if (next.errors.length > 0) return { ok: false, errors: next.errors };
      secretCache.clear();
      await scheduler.reload(next.manifests);
      return { ok: true, jobs: scheduler.jobs().size };
    },
    async stop(graceMs = 30_000) {
      await new Promise<void>((r) => server.close(() => r()));
      await scheduler.stop(graceMs);
      await store.close();
    },
  };
}
