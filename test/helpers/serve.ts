/**
 * Real `cronix serve` processes for tests: spawn one on a data dir and a free
 * port, wait for its `listening` line, talk to its API, kill it. The binary is
 * the built CLI (`npm test` builds first); `CRONIX_TEST_CLI` points the tests
 * at another build (an older commit, to show a test fails there).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { CLI } from './cli.js';
import { until } from './common.js';

/** The CLI under test. */
export const SERVE_CLI = process.env['CRONIX_TEST_CLI'] ?? CLI;

/** A secret long enough for `serve` (16 bytes or more). */
export const TEST_SECRET = 'proc-secret-0123456789';

/**
 * Every daemon spawned by this test process, killed if the tests end without killing them: at
 * the end of the test file (a test that fails half-way leaves its daemon running otherwise —
 * a worker that is torn down gets no 'exit' event), and at exit.
 */
const children = new Set<ChildProcess>();
const killAll = (): void => {
  for (const c of children) c.kill('SIGKILL');
};
process.once('exit', killAll);
afterAll(killAll);

/** A running (or exited) `cronix serve`. */
export interface Served {
  child: ChildProcess;
  url: string;
  port: number;
  /** The API token (read from the data dir once listening). */
  token: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Options of {@link spawnServe}. */
export interface SpawnOptions {
  /** Environment; default PATH and CRON_SECRET={@link TEST_SECRET}. */
  env?: NodeJS.ProcessEnv;
  /** Extra CLI arguments. */
  args?: string[];
  /** Wait for the `listening` log line (default true). */
  waitListening?: boolean;
  /** Data dir; default `<dir>/data`. */
  dataDir?: string;
  /** Token file to read the token from (with `--token-file` in `args`); default the data dir's. */
  tokenFile?: string;
  /** A command that runs the daemon (`['strace', '-f', …]`); default none. */
  wrap?: string[];
  /** The manifests it fires; default `[<dir>/manifest.json]` (`[]`: only `--watch` ones). */
  manifests?: string[];
}

/**
 * Spawns `cronix serve <dir>/manifest.json`. With `port` 0 (the default) the daemon binds a port
 * of the OS's choosing and the URL is read from its `listening` line: no window in which another
 * process can take a port chosen ahead.
 */
export async function spawnServe(dir: string, port = 0, o: SpawnOptions = {}): Promise<Served> {
  const dataDir = o.dataDir ?? join(dir, 'data');
  const wrap = o.wrap ?? [];
  const child = spawn(
    wrap[0] ?? process.execPath,
    [
      ...(wrap.length > 0 ? [...wrap.slice(1), process.execPath] : []),
      SERVE_CLI,
      'serve',
      ...(o.manifests ?? [join(dir, 'manifest.json')]),
      '--data-dir',
      dataDir,
      '--listen',
      `127.0.0.1:${port}`,
      '--grace-period',
      '1',
      ...(o.args ?? []),
    ],
    {
      env: o.env ?? { PATH: process.env['PATH'], CRON_SECRET: TEST_SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  const served: Served = {
    child,
    url: `http://127.0.0.1:${port}`,
    port,
    token: '',
    output: () => out,
    exited,
  };
  if (o.waitListening === false) return served;
  let gone = false;
  void exited.then(() => (gone = true));
  // a JSON line, or a pretty one (`--log-format pretty`)
  const listening = (): boolean =>
    out.includes('"event":"listening"') || out.includes(' event=listening ');
  for (let i = 0; i < 400 && !listening() && !gone; i++)
    await new Promise((r) => setTimeout(r, 25));
  if (!listening()) {
    child.kill('SIGKILL');
    throw new Error(`daemon did not start: ${out}`);
  }
  const found = /"url":"(http:\/\/[^"]+)"| url=(http:\/\/[^\s"]+)/.exec(out);
  const url = found?.[1] ?? found?.[2];
  if (url !== undefined) {
    served.url = url;
    served.port = Number(new URL(url).port);
  }
  served.token = readFileSync(o.tokenFile ?? join(dataDir, 'token'), 'utf8').trim();
  return served;
}

/** How long {@link api} waits for the daemon's whole answer. */
export const API_TIMEOUT_MS = 60_000;

/** Calls the API of a served daemon with its token. */
export async function api(
  s: Served,
  method: string,
  path: string,
  body?: object | string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    // bounded: with a daemon SIGKILLed while the request was connecting, Node 20's fetch (undici
    // 6.24) once left it queued on a client with no socket, neither answered nor failed, for ever
    // (the crash test's seed 399005 hung on it; docs/architecture.md, "Tests")
    signal: AbortSignal.timeout(API_TIMEOUT_MS),
    // a connection per call: a test that blocks between calls (a synchronous `cronix` run) would
    // otherwise send on a kept-alive socket the server has closed meanwhile ("other side closed")
    headers: {
      authorization: `Bearer ${s.token}`,
      'content-type': 'application/json',
      connection: 'close',
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { text };
  }
  return { status: res.status, json };
}

/** The role a served replica reports (`GET /api/v1/cluster`); null while it cannot answer. */
export async function servedRole(s: Served): Promise<string | null> {
  const r = await api(s, 'GET', '/api/v1/cluster').catch(() => null);
  return (r?.json['self'] as { role?: string } | undefined)?.role ?? null;
}

/** Waits until one of `replicas` leads, and returns it. */
export function leaderOf(replicas: readonly Served[], timeoutMs = 30_000): Promise<Served> {
  return until(
    async () => {
      for (const s of replicas) if ((await servedRole(s)) === 'leader') return s;
      return undefined;
    },
    timeoutMs,
    'a leader',
  );
}

/** A temp dir holding `manifest.json` of app `app` with `jobs` (signed with env:CRON_SECRET). */
export function manifestDir(app: string, jobs: Record<string, unknown>[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-serve-'));
  writeManifest(dir, app, jobs);
  return dir;
}

/** (Re)writes `<dir>/manifest.json`. */
export function writeManifest(dir: string, app: string, jobs: Record<string, unknown>[]): void {
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app,
      jobs: jobs.map((j) => ({ auth: { secret_refs: ['env:CRON_SECRET'] }, ...j })),
    }),
  );
}

export { until };

/** Most requests in flight at once, from the sink's arrival and close/end times. */
export function maxOverlap(
  requests: readonly { receivedAtPerf: number; handlerEndPerf?: number; closedAtPerf?: number }[],
): number {
  const edges: [number, number][] = [];
  for (const r of requests) {
    edges.push([r.receivedAtPerf, 1]);
    edges.push([r.handlerEndPerf ?? r.closedAtPerf ?? Infinity, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (now += d));
  return max;
}

/**
 * How a serve ended within `ms`: its exit, or 'running' when it is still up then (for one that
 * must stop on its own, a hang). Keep `ms` generous where an exit is expected: on a loaded
 * machine a start-up that refuses takes seconds (an 8 s bound failed in CI with other suites
 * spawning processes, for serves that exit in ~0.4 s on a quiet one).
 */
export function exitWithin(
  s: Pick<Served, 'exited'>,
  ms: number,
): Promise<Awaited<Served['exited']> | 'running'> {
  return Promise.race([
    s.exited,
    new Promise<'running'>((r) => setTimeout(() => r('running'), ms).unref()),
  ]);
}
