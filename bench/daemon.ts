/**
 * Daemon benchmarks (issue 5):
 * (a) 10,000 jobs due in the same second → dispatch lag at a local sink
 *     (arrival − scheduled time), beside the floor: the same 10,000 requests
 *     sent by a bare loop with the same HTTP client;
 * (b) 100,000 registered jobs on minute-granular schedules: RSS and idle CPU
 *     of a real `cronix serve` process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseManifest } from '../src/contract/manifest/index.js';
import type { Manifest } from '../src/contract/manifest/types.js';
import { Scheduler } from '../src/daemon/scheduler.js';
import { openSqliteStore } from '../src/daemon/store/sqlite.js';
import { systemClock } from '../src/fire/clock.js';
import { createHttpTransport } from '../src/fire/http-transport.js';
import type { Clock } from '../src/fire/types.js';

const CLI = fileURLToPath(new URL('../dist/bin/cronix.mjs', import.meta.url));
const q = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] as number;
};

function manifests(count: number, url: string, schedule: (i: number) => string): Manifest[] {
  const out: Manifest[] = [];
  for (let m = 0; m * 250 < count; m++) {
    const jobs = [];
    for (let j = 0; j < 250 && m * 250 + j < count; j++) {
      const i = m * 250 + j;
      jobs.push({
        name: `j${i}`,
        schedule: schedule(i),
        request: { url: `${url}/j${i}` },
        policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
        auth: { secret_refs: ['raw:bench'] },
      });
    }
    const r = parseManifest({ version: 1, app: `app${m}`, jobs });
    if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 2)));
    out.push(r.manifest);
  }
  return out;
}

export interface LagRow {
  what: string;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  n: number;
}

/** (a) dispatch lag of 10,000 jobs due in the same second vs the bare-client floor. */
export async function benchDispatchLag(n = 10_000): Promise<LagRow[]> {
  // a clock shifted so the next minute boundary is ~3 s away; time still flows in real time
  const offset =
    60_000 - (Date.now() % 60_000) - 3_000 + (Date.now() % 60_000 > 57_000 ? 60_000 : 0);
  const clock: Clock = { now: () => Date.now() + offset, sleep: systemClock.sleep };
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    arrivals.push(Date.now() + offset);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  server.maxConnections = 4096;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', 1024, r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // floor: the same client, the same number of requests, from a bare loop
  const floorTransport = createHttpTransport({ keepAlive: true, maxSockets: 256 });
  const floorStart = clock.now();
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      floorTransport.send(
        { method: 'POST', url: `${url}/j${i}`, headers: { 'x-cron-run-id': String(i) }, body: '' },
        { timeoutMs: 60_000, maxBodyBytes: 65536 },
      ),
    ),
  );
  const floor = arrivals.splice(0).map((a) => a - floorStart);
  await floorTransport.close?.();

  const dir = mkdtempSync(join(tmpdir(), 'cronix-bench-daemon-'));
  const store = await openSqliteStore(join(dir, 'ledger.sqlite'));
  const transport = createHttpTransport({ keepAlive: true, maxSockets: 256 });
  const scheduler = new Scheduler({ store, clock, transport, secretsFor: () => ['bench'] });
  await scheduler.start(manifests(n, url, () => '* * * * *'));
  const due = Math.ceil(clock.now() / 60_000) * 60_000;
  let ended = 0;
  let firstStart = 0;
  let lastStart = 0;
  let tickAt = 0;
  scheduler.events.on('tick', (t) => {
    if (t.due > 0 && tickAt === 0) tickAt = t.now;
  });
  scheduler.events.on('run-started', () => {
    const t = clock.now();
    if (firstStart === 0) firstStart = t;
    lastStart = t;
  });
  await new Promise<void>((resolve) => {
    scheduler.events.on('run-ended', () => {
      if (++ended >= n) resolve();
    });
  });
  const lag = arrivals.splice(0).map((a) => a - due);
  if (process.env['CRONIX_BENCH_DEBUG'])
    console.log({ tick: tickAt - due, firstStart: firstStart - due, lastStart: lastStart - due });
  await scheduler.stop(5000);
  await store.close();
  await transport.close?.();
  server.close();
  const row = (what: string, xs: number[]): LagRow => ({
    what,
    p50Ms: q(xs, 0.5),
    p99Ms: q(xs, 0.99),
    maxMs: Math.max(...xs),
    n: xs.length,
  });
  return [
    row(`cronix serve: ${n} jobs due at the same instant, arrival − scheduled time`, lag),
    row(`floor: the same ${n} requests from a bare loop, same client, arrival − start`, floor),
  ];
}

export interface IdleRow {
  jobs: number;
  startupSeconds: number;
  rssMb: number;
  idleCpuPercent: number;
}

/** (b) RSS and idle CPU of a real daemon holding `n` jobs on minute-granular schedules. */
export async function benchIdle(n = 100_000, idleSeconds = 20): Promise<IdleRow> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-bench-idle-'));
  // minute-granular yearly schedules spread over minutes and hours: registered, not firing now
  const all = manifests(
    n,
    'http://127.0.0.1:9',
    (i) => `${i % 60} ${Math.floor(i / 60) % 24} 1 ${1 + (i % 12)} *`,
  );
  const files = all.map((m, i) => {
    const f = join(dir, `m${i}.json`);
    writeFileSync(f, JSON.stringify(m));
    return f;
  });
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      ...files,
      '--data-dir',
      join(dir, 'data'),
      '--listen',
      '127.0.0.1:0',
      '--no-auth',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  while (!out.includes('"event":"listening"')) await new Promise((r) => setTimeout(r, 100));
  const startupSeconds = (Date.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 3000)); // let start-up garbage settle
  const ticks = (): number => {
    const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(f[11]) + Number(f[12]); // utime + stime, clock ticks
  };
  const t0 = ticks();
  const w0 = Date.now();
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const cpu = ((ticks() - t0) / 100 / ((Date.now() - w0) / 1000)) * 100;
  const rss =
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024;
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  return {
    jobs: n,
    startupSeconds,
    rssMb: Math.round(rss),
    idleCpuPercent: Math.round(cpu * 100) / 100,
  };
}
