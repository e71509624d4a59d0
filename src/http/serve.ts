/**
 * `cronix serve`: wires the store, the scheduler and the HTTP API into one
 * process, with manifests reloaded on demand (SIGHUP in the CLI) — a bad
 * manifest keeps the old set running and reports every error.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Manifest, ManifestError } from '../contract/manifest/types.js';
import type { Cluster } from '../daemon/cluster.js';
import type { DaemonControl } from '../daemon/control.js';
import { DaemonEmitter } from '../daemon/events.js';
import { DaemonMetrics } from '../daemon/metrics.js';
import { Scheduler, type SchedulerDeps } from '../daemon/scheduler.js';
import type { PostgresStore } from '../daemon/store/postgres.js';
import type { Store } from '../daemon/store/types.js';
import { systemClock } from '../fire/clock.js';
import { inheritedEnv } from '../fire/command-attempt.js';
import { createCommandRunner } from '../fire/command-runner.js';
import { createHttpTransport } from '../fire/http-transport.js';
import type { Clock, CommandRunner, Transport } from '../fire/types.js';
import { GlobalLocks, globalScopeProblems, needsGlobalLocks } from '../daemon/global-locks.js';
import { resolveJobSecrets } from '../daemon/job-secrets.js';
import { RunLogs } from '../daemon/run-logs.js';
import { hostIdentity } from '../locks/host.js';
import { resolveNotifiers, type ResolvedNotifier } from '../notify/resolve.js';
import type { SmtpTarget } from '../notify/smtp.js';
import { loadManifestFiles } from '../source/file.js';
import { createApi } from './api.js';
import { EventHub } from './events.js';
import { mountUi } from './ui/static.js';

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
  /** Runs command jobs; default the real runner (process groups, `<data-dir>/logs`). */
  commandRunner?: CommandRunner;
  env?: NodeJS.ProcessEnv;
  /**
   * `postgres://user@host:5432/db?schema=NAME`: a PostgreSQL store shared by
   * replicas (high availability); default `$CRONIX_STORE_URL`, else SQLite.
   */
  store?: string;
  /** This replica's name in a cluster; default `<host>:<pid>`. */
  replicaId?: string;
  /** Leader lease TTL in seconds; default 15. */
  leaseSeconds?: number;
  /** Told while the PostgreSQL store cannot be reached at start-up (it is retried). */
  onWaiting?: (message: string) => void;
  /** `redis://…` lock backend of global-scope jobs; default `$CRONIX_REDIS_URL`. */
  lockBackend?: string;
  /** Opens the store; default SQLite in the data dir. */
  openStore?: (dataDir: string) => Promise<Store>;
  /** The built web UI (index.html + assets); default the package's `dist/ui`. */
  uiDir?: string;
  /**
   * Called with the scheduler's events as soon as it exists, before start-up recovery, so what
   * recovery reports (runs ended crashed, leftover processes stopped) reaches the log.
   */
  onEvents?: (events: Scheduler['events']) => void;
  /** Extra TLS options of SMTP notifiers' connections (a private CA). */
  smtpTls?: SmtpTarget['tls'];
}

/** Resolves the notifiers of every manifest (SPEC §12): senders by app and name, or the problems. */
function resolveAllNotifiers(
  manifests: readonly Manifest[],
  env: NodeJS.ProcessEnv,
  smtpTls: SmtpTarget['tls'] | undefined,
):
  | { ok: true; byApp: Map<string, Map<string, ResolvedNotifier>> }
  | { ok: false; errors: string[] } {
  const byApp = new Map<string, Map<string, ResolvedNotifier>>();
  const errors: string[] = [];
  for (const m of manifests) {
    const r = resolveNotifiers(`app ${m.app}`, m.notifiers, {
      env,
      ...(smtpTls ? { smtpTls } : {}),
    });
    if (r.ok) byApp.set(m.app, r.notifiers);
    else errors.push(...r.errors);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, byApp };
}

/** A running daemon. */
export interface DaemonHandle {
  url: string;
  token: string | null;
  /** The scheduler, or this replica of a cluster. */
  scheduler: DaemonControl;
  store: Store;
  /** Reloads the manifest files; on any error keeps the old set and returns the errors. */
  reload(): Promise<
    | { ok: true; jobs: number }
    | { ok: false; errors: { file?: string; path?: string; message: string }[] }
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
  for await (const { path: file, result: r } of loadManifestFiles(files)) {
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

/**
 * A data dir that cannot be written, as one line naming the directory, the cause and the fix
 * (never "internal error"): `data dir /srv/x is not writable (EROFS: read-only file system) …`.
 */
export function dataDirProblem(dataDir: string, step: string, err: unknown): ServeError {
  const code = (err as NodeJS.ErrnoException).code;
  const cause =
    code === 'EROFS'
      ? 'EROFS: read-only file system'
      : code === 'EACCES' || code === 'EPERM'
        ? `${code}: permission denied for user ${process.getuid?.() ?? '?'}`
        : (code ?? (err as Error).message ?? String(err));
  return new ServeError(
    `data dir ${dataDir} is not writable (${cause}) while ${step}; pass --data-dir with a directory this user can write (default ./.cronix), or fix its permissions`,
  );
}

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
    try {
      writeFileSync(file, `${token}\n`, { mode: 0o600 });
    } catch (e) {
      throw dataDirProblem(dataDir, `writing the API token ${file}`, e);
    }
    return token;
  }
}

/** Human words for the errno of a failed `listen`. */
function listenProblem(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EADDRINUSE':
      return 'address already in use';
    case 'EACCES':
      return 'permission denied (ports below 1024 need privileges)';
    case 'EADDRNOTAVAIL':
      return 'address not available on this host';
    default:
      return err.code ?? err.message;
  }
}

/**
 * Takes the data dir's `serve.lock` for the daemon's whole life (SPEC §9 item
 * 1): a second `serve` on the same data dir is refused at once, naming the
 * holder. The kernel releases the lock when the process dies.
 */
async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  const { FlockBackend } = await import('../locks/flock.js');
  const locks = new FlockBackend(dataDir);
  let got;
  try {
    got = await locks.acquire('serve', {
      ttlMs: 0,
      holder: { pid: process.pid, host: hostIdentity(), acquiredAt: Date.now() },
    });
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    const code = /\b(EROFS|EACCES|EPERM)\b/.exec((err as Error).message)?.[1];
    if (code !== undefined)
      throw dataDirProblem(
        dataDir,
        'taking serve.lock',
        cause ?? Object.assign(err as Error, { code }),
      );
    throw new ServeError(`cannot lock data dir ${dataDir}: ${(err as Error).message}`);
  }
  if (!got.ok) {
    const h = got.holder;
    throw new ServeError(
      `data dir ${dataDir} is in use by another cronix serve` +
        (h ? ` (pid ${h.pid} on ${h.host})` : '') +
        '; stop it first or give this one another --data-dir',
    );
  }
  const lease = got.lease;
  return {
    async release() {
      await lease.release();
      await locks.close();
    },
  };
}

/**
 * Starts the daemon in the order of SPEC §9 item 2: lock the data dir, load
 * the manifests, open the store, bind the listen address, resolve every job's
 * secrets, and only then schedule. A failure at any step throws a
 * {@link ServeError} naming the cause, having fired nothing.
 */
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
    throw dataDirProblem(dataDir, 'creating it', err);
  }
  const dirLock = await lockDataDir(dataDir);
  const undo: (() => Promise<void>)[] = [() => dirLock.release()];
  try {
    const loaded = await loadManifests(opts.manifests);
    if (loaded.errors.length > 0) {
      throw new ServeError(
        loaded.errors
          .map((e) => `${e.file}: ${e.path === '' ? '(root)' : e.path}: ${e.message}`)
          .join('\n'),
      );
    }
    const token = opts.noAuth ? null : loadToken(opts, dataDir);
    const env = opts.env ?? process.env;
    const storeUrl = opts.store ?? env['CRONIX_STORE_URL'];
    const pg = storeUrl !== undefined && storeUrl !== '' ? await openPgStore(storeUrl, opts) : null;
    const store: Store = pg ?? (await openStoreOrExplain(opts, dataDir));
    undo.unshift(() => store.close());
    let secrets = new Map<string, string[]>();
    let envSecrets = new Map<string, Record<string, string>>();
    let notifiers = new Map<string, Map<string, ResolvedNotifier>>();
    const logs = new RunLogs(join(dataDir, 'logs'));
    try {
      logs.ensure();
    } catch (err) {
      throw new ServeError(
        `cannot create ${logs.dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
    let globalLocks: GlobalLocks | undefined;
    const clock = opts.clock ?? systemClock;
    const retentionDays = opts.retentionDays ?? 30;
    const transport = opts.transport ?? createHttpTransport({ keepAlive: true, maxSockets: 256 });
    const events = new DaemonEmitter();
    opts.onEvents?.(events);
    const commands = {
      runner: opts.commandRunner ?? createCommandRunner(),
      hostEnv: inheritedEnv(env),
      logs,
    };
    const metrics = new DaemonMetrics(() => clock.now());
    events.on('notification', (n) => metrics.notification(n));
    const schedulerOn = (s: Store, leader?: SchedulerDeps['leader']): Scheduler =>
      new Scheduler({
        store: s,
        ...(retentionDays > 0 ? { retentionMs: retentionDays * 86_400_000 } : {}),
        clock,
        transport,
        events,
        metrics,
        secretsFor: (job) => secrets.get(job.key) ?? [],
        // command jobs (SPEC §11): PATH HOME LANG TZ of the daemon and nothing else of it
        commands,
        envSecretsFor: (job) => envSecrets.get(job.key) ?? {},
        notifiersOf: (app) => notifiers.get(app),
        guardFor: (job, runKey, signal) => globalLocks?.for(job, runKey, signal),
        ...(leader && ha ? { leader, plannedMarginMs: ha.MAX_SKEW_MS } : {}),
      });
    // the HA layer and the PostgreSQL client load only with a PostgreSQL store (40 ms of start-up)
    const ha = pg ? await import('../daemon/cluster.js') : null;
    const runner: Scheduler | Cluster =
      ha && pg
        ? new ha.Cluster({
            store: pg,
            replicaId: opts.replicaId ?? `${hostIdentity()}:${process.pid}`,
            leaseMs: (opts.leaseSeconds ?? 15) * 1000,
            clock,
            events,
            metrics,
            schedulerFor: (s, leader) => schedulerOn(s, leader),
          })
        : schedulerOn(store);
    const scheduler: DaemonControl = runner;
    let ready = false;
    const hub = new EventHub(scheduler.events);
    const app = createApi({
      scheduler,
      store,
      token,
      logs,
      ready: () => ready,
      hub,
      extend: (a) => mountUi(a, opts.uiDir),
    });
    const server = await listen(app.fetch, host, port, opts.listen);
    undo.unshift(() => new Promise<void>((r) => server.close(() => r())));
    undo.unshift(async () => hub.close());
    const resolved = resolveJobSecrets(loaded.manifests, env);
    if (!resolved.ok) throw new ServeError(resolved.errors.join('\n'));
    secrets = resolved.secrets;
    envSecrets = resolved.envSecrets;
    const resolvedNotifiers = resolveAllNotifiers(loaded.manifests, env, opts.smtpTls);
    if (!resolvedNotifiers.ok) throw new ServeError(resolvedNotifiers.errors.join('\n'));
    notifiers = resolvedNotifiers.byApp;
    const problems = globalScopeProblems(loaded.manifests);
    if (problems.length > 0) throw new ServeError(problems.join('\n'));
    if (needsGlobalLocks(loaded.manifests)) {
      globalLocks = await openGlobalLocks(opts.lockBackend ?? env['CRONIX_REDIS_URL'], env, clock);
      undo.unshift(() => globalLocks!.close());
    }
    await runner.start(loaded.manifests);
    ready = true;
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
        const nextSecrets = resolveJobSecrets(next.manifests, env);
        const nextNotifiers = resolveAllNotifiers(next.manifests, env, opts.smtpTls);
        const problems = [
          ...(nextSecrets.ok ? [] : nextSecrets.errors),
          ...(nextNotifiers.ok ? [] : nextNotifiers.errors),
          ...globalScopeProblems(next.manifests),
          ...(needsGlobalLocks(next.manifests) && !globalLocks
            ? [
                'a job now has concurrency_scope global, but this daemon started without a lock backend; restart it with --lock-backend or CRONIX_REDIS_URL',
              ]
            : []),
        ];
        if (!nextSecrets.ok || !nextNotifiers.ok || problems.length > 0)
          return { ok: false, errors: problems.map((message) => ({ message })) };
        notifiers = nextNotifiers.byApp;
        secrets = nextSecrets.secrets;
        envSecrets = nextSecrets.envSecrets;
        await runner.reload(next.manifests);
        return { ok: true, jobs: scheduler.jobs().size };
      },
      async stop(graceMs = 30_000) {
        ready = false;
        hub.close(); // open event streams would keep the server from closing
        await closeServer(server);
        await runner.stop(graceMs);
        await globalLocks?.close();
        await store.close();
        await dirLock.release();
      },
    };
  } catch (err) {
    for (const step of undo) await step().catch(() => undefined);
    throw err;
  }
}

/** Connects the global lock backend, or explains why it cannot. */
async function openGlobalLocks(
  url: string | undefined,
  env: NodeJS.ProcessEnv,
  clock: Clock,
): Promise<GlobalLocks> {
  if (!url)
    throw new ServeError(
      'a job has concurrency_scope global: give the Redis lock backend with --lock-backend redis://host:6379 or CRONIX_REDIS_URL',
    );
  const prefix = env['CRONIX_REDIS_PREFIX'] ?? 'cronix:';
  const { RedisBackend } = await import('../locks/redis.js');
  const locks = new GlobalLocks(() => RedisBackend.connect(url, { prefix }), clock, {
    pid: process.pid,
    host: hostIdentity(),
  });
  try {
    await locks.open();
  } catch (err) {
    throw new ServeError(`lock backend: ${(err as Error).message}`);
  }
  return locks;
}

/**
 * Opens and migrates the PostgreSQL store. An unreachable server is retried
 * with backoff (1 s … 30 s), each failure told to `onWaiting`; a schema from a
 * newer cronix, a missing privilege or a bad URL stops start-up.
 */
async function openPgStore(url: string, opts: ServeOptions): Promise<PostgresStore> {
  const { PostgresStore } = await import('../daemon/store/postgres.js');
  const { PgStoreError } = await import('../daemon/store/pg/connect.js');
  let store: PostgresStore;
  try {
    store = PostgresStore.open(url, {
      onIdleError: (m) => opts.onWaiting?.(`idle connection dropped: ${m}`),
    });
  } catch (err) {
    throw new ServeError((err as Error).message);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await store.migrate();
      return store;
    } catch (err) {
      const message = (err as Error).message;
      const transient =
        err instanceof PgStoreError &&
        /refused|not found|timed out|reset|shutting down|starting up|terminat/.test(message);
      if (!transient) {
        await store.close();
        throw new ServeError(message);
      }
      const delay = Math.min(30_000, 1000 * 2 ** (attempt - 1));
      opts.onWaiting?.(`${message}; retrying in ${delay / 1000} s`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

async function openStoreOrExplain(opts: ServeOptions, dataDir: string): Promise<Store> {
  const openStore =
    opts.openStore ??
    (async (dir: string) => {
      const { openSqliteStore } = await import('../daemon/store/sqlite.js');
      return openSqliteStore(join(dir, 'ledger.sqlite'));
    });
  try {
    return await openStore(dataDir);
  } catch (err) {
    throw new ServeError(`cannot open the ledger in ${dataDir}: ${(err as Error).message}`);
  }
}

/**
 * Stops accepting connections and closes the idle ones at once; a browser's
 * keep-alive connections (the web UI) would otherwise hold the close for as long
 * as they stay open. Requests still in flight get a second to finish.
 */
function closeServer(server: ServerType): Promise<void> {
  return new Promise<void>((resolveClose) => {
    const http = server as HttpServer;
    // connections become idle as their last response ends (an event stream just closed)
    const idle = setInterval(() => http.closeIdleConnections?.(), 50);
    const cut = setTimeout(() => http.closeAllConnections?.(), 1_000);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolveClose();
    });
    http.closeIdleConnections?.();
  });
}

function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  host: string,
  port: number,
  listenText: string,
): Promise<ServerType> {
  return new Promise((resolveServer, reject) => {
    const s = serve({ fetch, hostname: host, port }, () => resolveServer(s));
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ServeError(`listen ${listenText}: ${listenProblem(err)}`)),
    );
  });
}
