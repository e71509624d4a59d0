/**
 * `cronix serve` over HTTP: boots the daemon (`src/daemon/boot.ts`), binds the
 * listen address between the boot and the start (SPEC §9 item 2: a daemon that
 * cannot listen fires nothing), and serves the API, the event stream and the
 * web UI until it is stopped.
 */
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { bootDaemon, ServeError, type BootOptions, type ReloadResult } from '../daemon/boot.js';
import type { DaemonControl } from '../daemon/control.js';
import type { Store } from '../daemon/store/types.js';
import type { Watch } from '../daemon/watch/watch.js';
import { createApi } from './api.js';
import { memoryReleaser } from './collect.js';
import { EventHub } from './events.js';
import { AllowedHosts, publicUrlHost } from './hosts.js';
import { fileRevocations } from './session-revocations.js';
import type { SsoConfig } from './sso.js';
import { DEFAULT_TOKEN_NAME } from './tokens.js';
import { mountUi } from './ui/static.js';

export { ServeError } from '../daemon/boot.js';

/** Options of {@link startDaemon}. */
export interface ServeOptions extends BootOptions {
  /** `HOST:PORT`. */
  listen: string;
  /** The built web UI (index.html + assets); default the package's `dist/ui`. */
  uiDir?: string;
  /** `--public-url`: the address users reach the daemon at; its host is an allowed `Host`. */
  publicUrl?: string;
  /** `--allowed-host` values: more `Host` names served besides loopback and the listen address. */
  allowedHosts?: string[];
  /** `--metrics-auth`: `/metrics` needs the API token. */
  metricsAuth?: boolean;
  /** `--oidc-*`: single sign-on for the web UI (SPEC §18). */
  sso?: SsoConfig;
  /** `--max-event-streams`: event streams open at once (default 500). */
  maxEventStreams?: number;
  /** `--max-event-streams-per-client`: per remote address (default 32). */
  maxEventStreamsPerClient?: number;
}

/** A running daemon. */
export interface DaemonHandle {
  url: string;
  token: string | null;
  /** The scheduler, or this replica of a cluster. */
  scheduler: DaemonControl;
  store: Store;
  /** Host mode (`--watch`, SPEC §15); null without it. */
  watch: Watch | null;
  /** Reloads the manifest files; on any error keeps the old set and returns the errors. */
  reload(): Promise<ReloadResult>;
  /** Stops; says how many ledger writes could not be made (a failing store). */
  stop(graceMs?: number): Promise<{ unflushed: number }>;
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
 * Starts the daemon in the order of SPEC §9 item 2: the boot (data dir, manifests, store),
 * then the listen address, then the start (secrets, notifiers, locks, scheduling). A failure
 * at any step throws a {@link ServeError} naming the cause, having fired nothing.
 */
export async function startDaemon(opts: ServeOptions): Promise<DaemonHandle> {
  const { host, port } = parseListen(opts.listen);
  if (opts.noAuth && !isLoopback(host)) {
    throw new ServeError(
      `--no-auth is only allowed when listening on loopback (127.0.0.1, ::1), not ${host}`,
    );
  }
  if (opts.noAuth && opts.sso)
    throw new ServeError('--oidc-issuer needs authentication: it cannot be used with --no-auth');
  const hosts = allowedHosts(host, opts);
  const daemon = await bootDaemon(opts);
  if (daemon.token !== null) {
    // the token file's token is the admin token `default` (SPEC §18); its row says if revoked
    try {
      await daemon.store.ensureFileToken(DEFAULT_TOKEN_NAME, daemon.control.now());
    } catch (err) {
      await daemon.abort();
      throw new ServeError(
        `the store could not record the token file's token: ${(err as Error).message}`,
      );
    }
  }
  let ready = false;
  const collect = memoryReleaser();
  const hub = new EventHub(daemon.control.events, {
    registry: daemon.control.metrics.registry,
    ...(collect ? { afterBurst: collect } : {}),
    ...(opts.maxEventStreams !== undefined ? { maxStreams: opts.maxEventStreams } : {}),
    ...(opts.maxEventStreamsPerClient !== undefined
      ? { maxStreamsPerClient: opts.maxEventStreamsPerClient }
      : {}),
  });
  const app = createApi({
    scheduler: daemon.control,
    store: daemon.store,
    token: daemon.token,
    hosts,
    metricsAuth: opts.metricsAuth === true,
    revocations: fileRevocations(join(daemon.dataDir, 'sessions-revoked.json'), () =>
      daemon.control.now(),
    ),
    logs: daemon.logs,
    ready: () => ready,
    hub,
    watch: daemon.watch,
    extend: (a) => mountUi(a, opts.uiDir),
    ...(opts.sso
      ? { sso: { ...opts.sso, ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}) } }
      : {}),
  });
  let server: ServerType;
  try {
    server = await listen(app.fetch, host, port, opts.listen);
  } catch (err) {
    await daemon.abort();
    throw err;
  }
  try {
    await daemon.start();
  } catch (err) {
    hub.close();
    await new Promise<void>((r) => server.close(() => r()));
    throw err;
  }
  ready = true;
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url,
    token: daemon.token,
    scheduler: daemon.control,
    store: daemon.store,
    watch: daemon.watch,
    reload: () => daemon.reload(),
    async stop(graceMs = 30_000) {
      ready = false;
      hub.close(); // open event streams would keep the server from closing
      await closeServer(server);
      return daemon.stop(graceMs);
    },
  };
}

/** The `Host` names served: loopback, the listen address, `--allowed-host`, `--public-url`. */
function allowedHosts(listenHost: string, opts: ServeOptions): AllowedHosts {
  const configured = [...(opts.allowedHosts ?? [])];
  if (opts.publicUrl !== undefined) {
    const h = publicUrlHost(opts.publicUrl);
    if (typeof h !== 'string') throw new ServeError(h.error);
    configured.push(h);
  }
  try {
    return new AllowedHosts(listenHost, configured);
  } catch (err) {
    throw new ServeError((err as Error).message);
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

/**
 * Answers clients that half-close after sending their request (`shutdown(SHUT_WR)`, as
 * `curl --no-keepalive` in some modes and many load testers do). Node's HTTP server defaults
 * `httpAllowHalfOpen` to false: on the client's FIN it aborts the request in flight and ends
 * the socket, so a handler that awaits (a cancel waiting for its run to stop) had nobody to
 * answer. With it true the response is written, then the socket is ended.
 */
function allowHalfOpen(server: HttpServer): void {
  (server as HttpServer & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}

function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  host: string,
  port: number,
  listenText: string,
): Promise<ServerType> {
  return new Promise((resolveServer, reject) => {
    const s = serve({ fetch, hostname: host, port }, () => resolveServer(s));
    allowHalfOpen(s as HttpServer);
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ServeError(`listen ${listenText}: ${listenProblem(err)}`)),
    );
  });
}
