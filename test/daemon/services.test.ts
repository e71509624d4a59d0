/**
 * Supervised services with real processes (SPEC §17), through a real `cronix serve` (the built
 * binary): processes are counted from `/proc`, the ledger read through the API, notifications
 * received by a webhook sink.
 *
 * One daemon, in order: three workers, one SIGKILLed → restarted after the backoff, the others
 * untouched; a worker that exits at once → its backoff grows, `failed` once, `recovered` after a
 * reload fixed it (which restarts only that service); a worker that ignores SIGTERM → SIGKILL
 * after its grace, the stop recorded; a start of a running instance → `skipped`; then the daemon
 * SIGKILLed with everything running and the lifeline's watchers killed first, so the instance
 * that writes nothing outlives it → the restarted daemon finds it by pid and start time and stops
 * it before it starts new ones (never two copies of one instance), the rows `crashed`.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cronixAsync } from '../helpers/cli.js';
import { sleep, until } from '../helpers/common.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';
import {
  isLive,
  serviceProcesses,
  servicesDir,
  workers,
  writeServices,
} from './services-process.js';

const MARK = randomUUID();
const env = { PATH: process.env['PATH'], TEST_MARK: MARK };

// one that ignores SIGTERM says so by a file beside the script once its handler is in place
// (node has its own SIGTERM handler from the start, so /proc's SigCgt cannot tell)
const WORKER = `
import { writeFileSync } from 'node:fs';
const tag = process.argv[2];
if (process.env.IGNORE_TERM) {
  process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
  writeFileSync(process.argv[1] + '.ignoring.' + process.pid, '');
}
console.log('up', tag, process.env.CRONIX_SERVICE, process.env.CRONIX_INSTANCE);
// one that ignores SIGTERM writes nothing more: a write to the dead daemon's pipe would end it
if (!process.env.IGNORE_TERM) setInterval(() => console.log('tick', process.env.CRONIX_INSTANCE), 200);
else setInterval(() => undefined, 1000);
`;

let dir = '';
let served: Served;
let sink: Sink;
let script = '';

/** The stubborn instance's pid once it ignores SIGTERM (before that, a SIGTERM ends it). */
function stubbornReady(): number | undefined {
  const pid = workers(MARK, 'stubborn', 's').get(0)?.[0];
  return pid !== undefined && existsSync(`${script}.ignoring.${pid}`) ? pid : undefined;
}

const service = (tag: string, extra: Record<string, unknown> = {}) => ({
  argv: [process.execPath, script, tag],
  env: { TEST_MARK: MARK },
  ...extra,
});

function manifest(
  flakyFixed: boolean,
  workerVersion = 1,
): [Record<string, unknown>, Record<string, unknown>] {
  return [
    {
      worker: service('w', {
        env: { TEST_MARK: MARK, VERSION: String(workerVersion) },
        instances: 3,
        restart: { min_seconds: 2, max_seconds: 8 },
        graceful_stop_seconds: 2,
      }),
      flaky: flakyFixed
        ? service('f', {
            restart: { min_seconds: 1, max_seconds: 8, reset_after_seconds: 2 },
            notify: [{ to: 'hook' }],
          })
        : {
            argv: ['/bin/sh', '-c', 'echo giving up; exit 3'],
            env: { TEST_MARK: MARK },
            restart: { min_seconds: 1, max_seconds: 8, reset_after_seconds: 2 },
            notify: [{ to: 'hook' }],
          },
      stubborn: service('s', {
        env: { TEST_MARK: MARK, IGNORE_TERM: '1' },
        graceful_stop_seconds: 2,
      }),
    },
    { notifiers: { hook: { type: 'webhook', url: sink.url } } },
  ];
}

type Json = Record<string, unknown>;
const runs = async (job: string): Promise<Json[]> =>
  (await api(served, 'GET', `/api/v1/runs?app=shop&job=${job}&limit=200`)).json['runs'] as Json[];
const instanceState = async (name: string, i: number): Promise<Json> => {
  const s = (await api(served, 'GET', `/api/v1/services/shop/${name}`)).json;
  return (s['instance_states'] as Json[])[i] as Json;
};
const events = (event: string): unknown[] =>
  sink.requests
    .map((r) => JSON.parse(r.bodyText) as Json)
    .filter((b) => b['event'] === event && b['job'] === 'flaky');

beforeAll(async () => {
  sink = await startSink();
  const [services, extra] = [{}, {}];
  dir = servicesDir(services, extra);
  script = join(dir, 'worker.mjs');
  writeFileSync(script, WORKER);
  writeServices(dir, ...manifest(false));
  served = await spawnServe(dir, 0, { env });
}, 60_000);

afterAll(async () => {
  served?.child.kill('SIGKILL');
  // a test that failed after killing the lifeline's watchers leaves instances no daemon stops
  // (the stubborn one ignores SIGTERM): end every process of this file's run
  for (const p of serviceProcesses(MARK)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  await sink?.close();
});

describe('services with real processes', () => {
  it('keeps 3 instances; a SIGKILLed one comes back after its backoff, the others untouched', async () => {
    const pids = await until(
      () => {
        const w = workers(MARK, 'worker', 'w');
        return [0, 1, 2].every((i) => w.get(i)?.length === 1) ? w : undefined;
      },
      30_000,
      'three workers',
    );
    const before = [0, 1, 2].map((i) => pids.get(i)![0]!);
    const killedAt = Date.now();
    process.kill(before[1]!, 'SIGKILL');
    let most = 0;
    const back = await until(
      () => {
        const w = workers(MARK, 'worker', 'w');
        for (const list of w.values()) most = Math.max(most, list.length);
        const now = w.get(1)?.[0];
        return now !== undefined && now !== before[1] ? { pid: now, at: Date.now() } : undefined;
      },
      30_000,
      'instance 1 back',
    );
    // the backoff (min_seconds 2) passed before the new process started
    expect(back.at - killedAt).toBeGreaterThanOrEqual(1900);
    expect(most).toBe(1);
    const after = workers(MARK, 'worker', 'w');
    expect(after.get(0)).toEqual([before[0]]);
    expect(after.get(2)).toEqual([before[2]]);
    const rows = await runs('worker');
    const crashed = rows.find((r) => r['outcome'] === 'crashed');
    expect(crashed).toMatchObject({
      trigger: 'service',
      schedule_index: 1,
      error: 'killed by signal SIGKILL',
    });
    expect(await instanceState('worker', 1)).toMatchObject({ restarts: 1, state: 'running' });
    expect(await instanceState('worker', 0)).toMatchObject({ restarts: 0, pid: before[0] });
  }, 60_000);

  it('backs off more after each quick exit, notifies failed once, recovered after a reload fixed it', async () => {
    const starts = await until(
      async () => {
        const rows = (await runs('flaky')).filter((r) => r['outcome'] === 'crashed');
        return rows.length >= 4 ? rows : undefined;
      },
      40_000,
      'four exits of flaky',
    );
    const spans = starts
      .map((r) => [Date.parse(r['started_at'] as string), Date.parse(r['ended_at'] as string)])
      .sort((a, b) => a[0]! - b[0]!);
    // from each exit to the next start: 1 s, 2 s, 4 s (min_seconds 1, doubling)
    const gaps = spans.slice(1).map((s, i) => s[0]! - spans[i]![1]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    expect(gaps[1]).toBeGreaterThanOrEqual(1950);
    expect(gaps[2]).toBeGreaterThanOrEqual(3950);
    await until(() => (events('failed').length > 0 ? true : undefined), 20_000, 'failed');
    expect(events('failed')).toHaveLength(1);
    expect(events('failed')[0]).toMatchObject({ event: 'failed', app: 'shop', job: 'flaky' });
    const st = await instanceState('flaky', 0);
    expect(st['crash_loop']).toBe(true);

    // the fix: a reload changes flaky only; the workers keep their processes
    const workersBefore = workers(MARK, 'worker', 'w');
    writeServices(dir, ...manifest(true));
    served.child.kill('SIGHUP');
    await until(
      () => (workers(MARK, 'flaky', 'f').get(0)?.length === 1 ? true : undefined),
      20_000,
      'flaky fixed',
    );
    await until(() => (events('recovered').length > 0 ? true : undefined), 20_000, 'recovered');
    expect(events('recovered')).toHaveLength(1);
    expect(events('failed')).toHaveLength(1);
    expect(workers(MARK, 'worker', 'w')).toEqual(workersBefore);
    expect((await instanceState('flaky', 0))['crash_loop']).toBe(false);
  }, 90_000);

  it('stops a worker that ignores SIGTERM with SIGKILL after its grace; a start of a running one is skipped', async () => {
    const pid = await until(stubbornReady, 20_000, 'stubborn');
    const t0 = Date.now();
    const stop = await api(served, 'POST', '/api/v1/services/shop/stubborn/stop', {});
    const took = Date.now() - t0;
    expect(stop.status).toBe(200);
    expect(stop.json['results']).toEqual([{ instance: 0, result: 'stopped', run_id: null }]);
    expect(took).toBeGreaterThanOrEqual(1900); // graceful_stop_seconds 2, then SIGKILL
    expect(workers(MARK, 'stubborn', 's').get(0)).toBeUndefined();
    expect(isLive(pid)).toBe(false);
    const row = (await runs('stubborn')).find((r) => r['outcome'] === 'stopped');
    expect(row).toMatchObject({ trigger: 'service', error: 'stopped by an operator' });
    expect(await instanceState('stubborn', 0)).toMatchObject({ state: 'stopped', pid: null });

    const start = await api(served, 'POST', '/api/v1/services/shop/stubborn/start', {
      instance: 0,
    });
    expect(start.json['results']).toEqual([{ instance: 0, result: 'started', run_id: null }]);
    const again = await api(served, 'POST', '/api/v1/services/shop/stubborn/start', {
      instance: 0,
    });
    const skipped = (again.json['results'] as Json[])[0] as Json;
    expect(skipped['result']).toBe('skipped');
    const row2 = (await runs('stubborn')).find((r) => r['id'] === skipped['run_id']);
    expect(row2).toMatchObject({ outcome: 'skipped', error: 'instance 0 is already running' });
    const bad = await api(served, 'POST', '/api/v1/services/shop/stubborn/start', { instance: 5 });
    expect(bad.status).toBe(404);
    expect((bad.json['error'] as Json)['message']).toMatch(/no instance 5/);
  }, 60_000);

  it('cronix logs follows an instance across its restarts; cronix services lists and restarts', async () => {
    const cliEnv = { ...process.env, CRONIX_URL: served.url, CRONIX_TOKEN: served.token };
    const follower = spawn(
      process.execPath,
      [CLI, 'logs', 'shop/worker', '--instance', '2', '-f'],
      {
        env: cliEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    follower.stdout.on('data', (d: Buffer) => (out += d.toString()));
    follower.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      await until(
        () => (out.includes('tick 2') ? true : undefined),
        20_000,
        'output of instance 2',
      );
      expect(out).not.toContain('tick 1');
      const restart = await cronixAsync(['services', 'restart', 'shop/worker', '--instance', '2'], {
        env: cliEnv,
      });
      expect(restart.status).toBe(0);
      expect(restart.stdout).toContain('shop/worker instance 2: restarted');
      // the follower moves on to the new start by itself
      await until(
        () => (err.includes('instance 2 started again') ? true : undefined),
        20_000,
        'next start',
      );
      // the new start's output follows: its first line a second time
      await until(
        () => (out.split('up w worker 2').length - 1 >= 2 ? true : undefined),
        20_000,
        'new output',
      );
    } finally {
      follower.kill('SIGTERM');
    }
    const list = await cronixAsync(['services', '-o', 'json'], { env: cliEnv });
    expect(list.status).toBe(0);
    const services = (JSON.parse(list.stdout) as { services: Json[] }).services;
    expect(services.map((x) => x['service'])).toEqual(['flaky', 'stubborn', 'worker']);
    const table = await cronixAsync(['services'], { env: cliEnv });
    expect(table.stdout).toMatch(/SERVICE\s+INSTANCE\s+STATE\s+PID\s+UPTIME\s+RESTARTS/);
    const bad = await cronixAsync(['services', 'restart', 'shop/nope'], { env: cliEnv });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('no service shop/nope');
    // a host backend refuses the services with the reason and writes nothing
    const plan = await cronixAsync(
      [
        'plan',
        join(dir, 'manifest.json'),
        '--backend',
        'crontab',
        '--crontab-path',
        join(dir, 'crontab'),
      ],
      { env: cliEnv },
    );
    expect(plan.status).toBe(1);
    expect(plan.stdout + plan.stderr).toContain('runs only under cronix serve');
  }, 90_000);

  it('a reload that changes a service restarts its instances one at a time, each up before the next', async () => {
    const before = workers(MARK, 'worker', 'w');
    expect(before.size).toBe(3);
    const since = Date.now();
    writeServices(dir, ...manifest(true, 2));
    served.child.kill('SIGHUP');
    const changed = await until(
      async () => {
        const rows = (await runs('worker')).filter(
          (r) => r['outcome'] === 'stopped' && r['error'] === 'service changed by a reload',
        );
        return rows.length === 3 ? rows : undefined;
      },
      30_000,
      'three restarts',
    );
    const fresh = await until(
      async () => {
        const rows = (await runs('worker')).filter(
          (r) => r['phase'] === 'running' && Date.parse(r['started_at'] as string) >= since,
        );
        return rows.length === 3 ? rows : undefined;
      },
      30_000,
      'three new starts',
    );
    const by = (rows: Json[], key: string) =>
      new Map(rows.map((r) => [r['schedule_index'] as number, Date.parse(r[key] as string)]));
    const stoppedAt = by(changed, 'ended_at');
    const startedAt = by(fresh, 'started_at');
    // instance i+1 is stopped only once instance i runs again
    for (const i of [0, 1]) expect(stoppedAt.get(i + 1)!).toBeGreaterThanOrEqual(startedAt.get(i)!);
    const after = workers(MARK, 'worker', 'w');
    for (const i of [0, 1, 2]) expect(after.get(i)?.[0]).not.toBe(before.get(i)?.[0]);
    // the other services were not touched
    expect(
      (await runs('stubborn')).filter((r) => r['error'] === 'service changed by a reload'),
    ).toEqual([]);
  }, 60_000);

  it('after a SIGKILL of the daemon: leftovers stopped, rows crashed, never two copies of an instance', async () => {
    const old = await until(
      () => {
        const w = workers(MARK, 'worker', 'w');
        const s = workers(MARK, 'stubborn', 's');
        return w.size === 3 && s.size === 1 ? { w, s } : undefined;
      },
      20_000,
      'all up',
    );
    const oldPids = new Set([...old.w.values(), ...old.s.values()].flat());
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const name of ['worker', 'stubborn'] as const)
          for (const list of workers(MARK, name, name === 'worker' ? 'w' : 's').values())
            most = Math.max(most, list.length);
        await sleep(20);
      }
    })();
    // the lifeline's watchers go first, so an instance can outlive the daemon (as when the
    // watcher could not run): only start-up recovery can find and stop it
    for (const p of serviceProcesses(MARK))
      if (p.cmdline.includes('-c')) process.kill(p.pid, 'SIGKILL');
    served.child.kill('SIGKILL');
    await served.exited;
    await sleep(500);
    // the ticking workers die writing to the dead daemon's pipe (EPIPE); the stubborn one writes
    // nothing more and lives on: a leftover
    const stubbornPid = [...old.s.values()].flat()[0] as number;
    expect(isLive(stubbornPid), `stubborn ${stubbornPid} outlived the daemon`).toBe(true);
    served = await spawnServe(dir, 0, { env });
    const fresh = await until(
      () => {
        const w = workers(MARK, 'worker', 'w');
        const s = workers(MARK, 'stubborn', 's');
        const all = [...w.values(), ...s.values()].flat();
        return w.size === 3 && s.size === 1 && all.every((p) => !oldPids.has(p)) ? all : undefined;
      },
      40_000,
      'fresh instances',
    );
    sampling = false;
    await sampler;
    expect(most).toBe(1);
    expect(fresh).toHaveLength(4);
    for (const pid of oldPids) expect(isLive(pid), `old pid ${pid}`).toBe(false);
    const crashed = (await runs('worker')).filter((r) => r['outcome'] === 'crashed');
    expect(
      crashed.filter((r) => r['error'] === 'the daemon stopped while the run was active'),
    ).toHaveLength(3);
    // found by pid and start time, and stopped, by the restarted daemon's recovery
    expect(served.output()).toMatch(
      /shop\/stubborn: run \S+ was left running by a crash; stopped its/,
    );
  }, 90_000);

  it('ties the instances to the daemon: SIGKILLed and not restarted, it leaves none behind past the grace', async () => {
    await until(
      () =>
        workers(MARK, 'worker', 'w').size === 3 && stubbornReady() !== undefined ? true : undefined,
      20_000,
      'all up',
    );
    const killedAt = Date.now();
    served.child.kill('SIGKILL');
    await served.exited;
    // the workers go at the lifeline's SIGTERM; the one that ignores it, at SIGKILL 2 s later
    await until(
      () => (workers(MARK, 'worker', 'w').size === 0 ? true : undefined),
      10_000,
      'workers gone',
    );
    await until(
      () => (workers(MARK, 'stubborn', 's').size === 0 ? true : undefined),
      10_000,
      'stubborn gone',
    );
    const stubbornGone = Date.now() - killedAt;
    // bounded by the waits' deadlines above (how fast is bench work, not asserted here); the
    // claim: the one that ignores SIGTERM lives until the grace, then goes
    expect(stubbornGone).toBeGreaterThanOrEqual(1900);
    // nothing of any instance is left: the watchers end with their groups
    await until(
      () => (serviceProcesses(MARK).length === 0 ? true : undefined),
      5000,
      'no process left',
    );
  }, 60_000);
});
