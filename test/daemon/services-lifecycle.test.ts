/**
 * The rest of a service's life cycle with real processes (SPEC §17), through a real
 * `cronix serve` (the built binary): readiness (an HTTP check that passes → `ready`; a TCP check
 * that never passes → `running`, not ready, a warning logged, the process kept), the output cap
 * per start, a reload that removes a service (its processes stopped, their rows `stopped`,
 * `service removed`), and SIGTERM of the daemon (every instance stopped gracefully, the daemon
 * exits 0, no process left; the rows `stopped`, `daemon shutting down`, seen after a restart).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/common.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { freePort } from '../helpers/sink.js';
import { serviceProcesses, servicesDir, writeServices } from './services-process.js';

const MARK = randomUUID();
const env = { PATH: process.env['PATH'], TEST_MARK: MARK };

// READY_PORT: answer HTTP there; CHATTY: print that many bytes and exit 0; on SIGTERM: write
// `graceful <service> <instance>` to GRACEFUL_FILE and exit 0
const WORKER = `
import http from 'node:http';
import { appendFileSync } from 'node:fs';
const { CRONIX_SERVICE: service, CRONIX_INSTANCE: instance } = process.env;
process.on('SIGTERM', () => {
  appendFileSync(process.env.GRACEFUL_FILE, 'graceful ' + service + ' ' + instance + '\\n');
  process.exit(0);
});
if (process.env.CHATTY) {
  process.stdout.write('x'.repeat(Number(process.env.CHATTY)), () => process.exit(0));
} else {
  if (process.env.READY_PORT)
    http.createServer((_, res) => res.end('ok')).listen(Number(process.env.READY_PORT), '127.0.0.1');
  setInterval(() => undefined, 1000);
}
`;

type Json = Record<string, unknown>;
let dir = '';
let served: Served;
let script = '';
let graceful = '';
let readyPort = 0;
let deadPort = 0;

const service = (extra: Record<string, unknown>, envExtra: Record<string, string> = {}) => ({
  argv: [process.execPath, script],
  env: { TEST_MARK: MARK, GRACEFUL_FILE: graceful, ...envExtra },
  graceful_stop_seconds: 5,
  restart: { min_seconds: 1, max_seconds: 2 },
  ...extra,
});

function services(withRemovable: boolean): Record<string, unknown> {
  return {
    web: service(
      { ready: { http_get: `http://127.0.0.1:${readyPort}/`, timeout_seconds: 20 } },
      { READY_PORT: String(readyPort) },
    ),
    ...(withRemovable
      ? {
          deaf: service({ ready: { tcp: `127.0.0.1:${deadPort}`, timeout_seconds: 1 } }),
          chatty: service({ max_output_bytes: 1000 }, { CHATTY: '50000' }),
        }
      : {}),
  };
}

const view = async (name: string): Promise<Json> =>
  (await api(served, 'GET', `/api/v1/services/shop/${name}`)).json;
const state = async (name: string): Promise<Json> =>
  ((await view(name))['instance_states'] as Json[])[0] as Json;
const runs = async (job: string): Promise<Json[]> =>
  (await api(served, 'GET', `/api/v1/runs?app=shop&job=${job}&limit=100`)).json['runs'] as Json[];
const alive = (name: string): number[] =>
  serviceProcesses(MARK)
    .filter((p) => p.service === name && p.cmdline.at(-1) === script && !p.cmdline.includes('-c'))
    .map((p) => p.pid);

beforeAll(async () => {
  dir = servicesDir({});
  script = join(dir, 'worker.mjs');
  graceful = join(dir, 'graceful.txt');
  writeFileSync(script, WORKER);
  readyPort = await freePort();
  deadPort = await freePort(); // nobody listens there
  writeServices(dir, services(true));
  served = await spawnServe(dir, 0, { env });
}, 60_000);

afterAll(() => {
  served?.child.kill('SIGKILL');
  for (const p of serviceProcesses(MARK)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
});

describe('service life cycle with real processes', () => {
  it('readiness: an HTTP check that passes makes the instance ready; a TCP check that never does leaves it running, not ready, with a warning', async () => {
    const web = await until(
      async () => {
        const s = await state('web');
        return s['state'] === 'ready' ? s : undefined;
      },
      30_000,
      'web ready',
    );
    expect(web).toMatchObject({ state: 'ready', ready: true });
    const deaf = await until(
      async () => {
        const s = await state('deaf');
        return s['ready'] === false && s['state'] === 'running' ? s : undefined;
      },
      30_000,
      'deaf given up on',
    );
    expect(deaf['pid']).toEqual(expect.any(Number));
    expect(alive('deaf')).toEqual([deaf['pid']]); // not killed: a slow start is not a crash
    await until(
      () =>
        served
          .output()
          .includes(`shop/deaf: instance 0 is not ready after 1 s (tcp 127.0.0.1:${deadPort})`)
          ? true
          : undefined,
      10_000,
      'the warning',
    );
  }, 60_000);

  it('keeps at most max_output_bytes of a start and says it cut the rest', async () => {
    const ended = await until(
      async () => (await runs('chatty')).find((r) => r['phase'] === 'ended'),
      30_000,
      'a start of chatty ended',
    );
    expect(ended).toMatchObject({ trigger: 'service', output_truncated: true });
    const log = await fetch(`${served.url}/api/v1/runs/${ended['id'] as string}/log`, {
      headers: { authorization: `Bearer ${served.token}` },
    });
    expect(log.status).toBe(200);
    const text = await log.text();
    const longest = Math.max(0, ...(text.match(/x+/g) ?? []).map((run) => run.length));
    expect(longest).toBe(1000);
  }, 60_000);

  it('a reload that removes services stops their processes; their rows end stopped', async () => {
    writeServices(dir, services(false));
    served.child.kill('SIGHUP');
    await until(
      () => (alive('deaf').length === 0 && alive('chatty').length === 0 ? true : undefined),
      30_000,
      'removed services gone',
    );
    const row = await until(
      async () =>
        (await runs('deaf')).find(
          (r) => r['outcome'] === 'stopped' && r['error'] === 'service removed',
        ),
      20_000,
      'the stopped row',
    );
    expect(row).toMatchObject({ trigger: 'service' });
    expect(readFileSync(graceful, 'utf8')).toContain('graceful deaf 0');
    expect(alive('web')).toHaveLength(1); // untouched
  }, 60_000);

  it('SIGTERM of the daemon stops every instance gracefully, exits 0, leaves no process; the rows say why', async () => {
    const web = alive('web');
    expect(web).toHaveLength(1);
    served.child.kill('SIGTERM');
    const exit = await served.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(readFileSync(graceful, 'utf8')).toContain('graceful web 0');
    // the lifeline's watcher goes with the daemon, at most a moment later
    await until(
      () => (serviceProcesses(MARK).length === 0 ? true : undefined),
      10_000,
      'none left',
    );
    // the ended rows are in the ledger: a restarted daemon shows them
    served = await spawnServe(dir, 0, { env });
    const row = (await runs('web')).find((r) => r['outcome'] === 'stopped');
    expect(row).toMatchObject({ trigger: 'service', error: 'daemon shutting down' });
  }, 60_000);
});
