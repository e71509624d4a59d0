/**
 * Dispatch lag beside the peers (issue 12): N jobs all due at one instant T,
 * each fire a POST to a keep-alive sink **in its own process** that records
 * arrival − T. Every system runs as a separate process, one at a time, on the
 * same machine, in one run: the bare-client floors (node's `http.request` with
 * a keep-alive agent, undici's `Agent.request`), croner, node-cron, BullMQ job
 * schedulers (on the local Redis, its own key prefix) and the real
 * `cronix serve` (SQLite, and PostgreSQL when a server answers). Every system
 * is given a six-field schedule for T and time to register before it; its peak
 * RSS is read from /proc while it dispatches.
 *
 * With `bursts` = 2 (steady state) every system fires at two instants of one
 * minute, T1 and T2 = T1 + 8 s (15 s at 10,000), and only the second burst is
 * measured: what a long-running process does at every boundary after its
 * first, with its code warm (optimized by V8) and its pools open.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('./dispatch/', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/bin/cronix.mjs', import.meta.url));

/** One measured run. */
export interface DispatchRow {
  system: string;
  n: number;
  run: number;
  p50: number;
  p99: number;
  max: number;
  received: number;
  rssMb: number;
  /** CPU time (user + system) of the scheduling process from T − 100 ms to the last arrival. */
  cpuMs: number;
  load: number;
}

interface System {
  name: string;
  /** ms between the start of the process and T. */
  lead(n: number): number;
  /** Starts the system with a schedule that fires at each of `instants` (one minute). */
  start(sinkUrl: string, n: number, instants: number[], dir: string): ChildProcess;
  ready: RegExp;
}

/** Extra node flags of the measured process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
export const profileArgs = (): string[] =>
  (process.env['CRONIX_BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

/**
 * The output file of a measured process. Its stdout and stderr go to a file, not a pipe the
 * bench reads: on two cores a reader process competes with the system it measures (cronix logs
 * two lines per run, the peers none), the way a log file or collector does not.
 */
const outputOf = (dir: string): number => openSync(join(dir, 'out.log'), 'a');

const node = (file: string, args: string[], dir?: string): ChildProcess => {
  const out = dir === undefined ? 'pipe' : outputOf(dir);
  const child = spawn(
    process.execPath,
    [...(file === 'sink.mjs' ? [] : profileArgs()), join(HERE, file), ...args],
    { stdio: ['ignore', out, out] },
  );
  if (typeof out === 'number') closeSync(out);
  return child;
};

function cronixSystem(name: string, storeUrl?: string): System {
  return {
    name,
    lead: (n) => (n >= 10_000 ? 9000 : 5000),
    ready: /"event":"listening"/,
    start(sinkUrl, n, instants, dir) {
      const at = new Date(instants[0] ?? 0);
      const seconds = instants.map((t) => new Date(t).getUTCSeconds()).join(',');
      const schedule = `${seconds} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
      const files: string[] = [];
      for (let m = 0; m * 250 < n; m++) {
        const jobs = [];
        for (let j = m * 250; j < Math.min(n, (m + 1) * 250); j++)
          jobs.push({
            name: `j${j}`,
            schedule,
            request: { url: `${sinkUrl}/j${j}` },
            policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
            auth: { secret_refs: ['raw:bench-secret-0123456789'] },
          });
        const file = join(dir, `m${m}.json`);
        writeFileSync(file, JSON.stringify({ version: 1, app: `app${m}`, jobs }));
        files.push(file);
      }
      const nodeArgs = profileArgs();
      const out = outputOf(dir);
      const child = spawn(
        process.execPath,
        [
          ...nodeArgs,
          CLI,
          'serve',
          ...files,
          '--data-dir',
          join(dir, 'data'),
          '--listen',
          '127.0.0.1:0',
          '--no-auth',
          ...(storeUrl ? ['--store', storeUrl] : []),
        ],
        { stdio: ['ignore', out, out] },
      );
      closeSync(out);
      return child;
    },
  };
}

/** Every system of the comparison. */
export function systems(pgUrl?: string): System[] {
  const peer = (
    name: string,
    file: string,
    lead: (n: number) => number,
    extra: string[] = [],
  ): System => ({
    name,
    lead,
    ready: /^ready$/m,
    start: (sinkUrl, n, instants, dir) =>
      node(file, [sinkUrl, String(n), instants.join(','), ...extra], dir),
  });
  return [
    peer('floor: http.request keep-alive', 'floor-http.mjs', () => 2500),
    peer('floor: undici Agent.request', 'floor-undici.mjs', () => 2500),
    peer('durable floor: + rows, signing, logs', 'floor-durable.mjs', () => 2500),
    peer('croner 11 + undici', 'peer-croner.mjs', (n) => (n >= 10_000 ? 8000 : 3000)),
    peer('node-cron 4.6 + undici', 'peer-node-cron.mjs', (n) => (n >= 10_000 ? 8000 : 3000)),
    peer('BullMQ 6.7 job schedulers', 'peer-bullmq.mjs', (n) => (n >= 10_000 ? 30_000 : 8000), [
      process.env['CRONIX_BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    ]),
    cronixSystem('cronix serve (SQLite)'),
    ...(pgUrl ? [cronixSystem('cronix serve (PostgreSQL)', pgUrl)] : []),
  ];
}

/** User + system CPU of a process so far, in ms (`/proc/<pid>/stat`, clock ticks of 10 ms). */
const cpuMsOf = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
};

const peakRssMb = (pid: number): number => {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};

/**
 * The instants of one run: the first whole second after the system's lead time, and with two
 * bursts a second instant `gap` later in the same minute (a six-field pattern lists both).
 */
function instantsOf(system: System, n: number, bursts: 1 | 2): number[] {
  let t = Math.ceil((Date.now() + system.lead(n)) / 1000) * 1000;
  if (bursts === 1) return [t];
  const gap = n >= 10_000 ? 15_000 : 8000;
  const second = new Date(t).getUTCSeconds();
  if (second * 1000 + gap > 59_000) t += (60 - second) * 1000; // both in one minute
  return [t, t + gap];
}

/** Runs one system once at size n; with two bursts, the second is measured. */
export async function runOnce(
  system: System,
  n: number,
  run: number,
  pgSchema?: () => Promise<void>,
  bursts: 1 | 2 = 1,
): Promise<DispatchRow> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-bench-dispatch-'));
  const load = loadavg()[0] ?? 0;
  const instants = instantsOf(system, n, bursts);
  const t = instants[0] ?? 0;
  const measured = instants.at(-1) ?? t;
  const portFile = join(dir, 'port');
  const sink = node('sink.mjs', [
    portFile,
    instants.join(','),
    String(n),
    String(measured - Date.now() + 60_000),
  ]);
  let stats = '';
  sink.stdout?.on('data', (d: Buffer) => (stats += d.toString()));
  const sinkDone = new Promise<void>((r) => sink.on('exit', () => r()));
  while (!existsSync(portFile) || readFileSync(portFile, 'utf8') === '') await sleep(20);
  const sinkUrl = `http://127.0.0.1:${readFileSync(portFile, 'utf8')}`;
  await pgSchema?.();
  const child = system.start(sinkUrl, n, instants, dir);
  const outFile = join(dir, 'out.log');
  let out = '';
  let readyAt = 0;
  const readiness = setInterval(() => {
    out = existsSync(outFile) ? readFileSync(outFile, 'utf8').slice(0, 100_000) : '';
    if (system.ready.test(out)) {
      readyAt = Date.now();
      clearInterval(readiness);
    }
  }, 20);
  let rss = 0;
  const poll = setInterval(() => (rss = Math.max(rss, peakRssMb(child.pid ?? 0))), 100);
  let cpuBefore = 0;
  const cpuMark = setTimeout(
    () => (cpuBefore = cpuMsOf(child.pid ?? 0)),
    measured - 100 - Date.now(),
  );
  await sinkDone;
  const cpuMs = cpuMsOf(child.pid ?? 0) - cpuBefore;
  clearTimeout(cpuMark);
  clearInterval(poll);
  clearInterval(readiness);
  rss = Math.max(rss, peakRssMb(child.pid ?? 0));
  // a peer may have exited on its own already (its 'exit' then never fires again)
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  // for profiling (bench/one.ts): the measured process's output, e.g. with --trace-gc
  const keep = process.env['CRONIX_BENCH_KEEP_OUTPUT'];
  if (keep && existsSync(outFile)) writeFileSync(keep, readFileSync(outFile));
  rmSync(dir, { recursive: true, force: true });
  if (readyAt === 0 || readyAt > t - 100)
    throw new Error(
      `${system.name} (${n}) was not ready before the instant (${readyAt === 0 ? 'never' : `${readyAt - t} ms late`}): ${out.slice(-400)}`,
    );
  const s = JSON.parse(stats.trim().split('\n').at(-1) ?? '{}') as {
    n: number;
    p50: number;
    p99: number;
    max: number;
  };
  return {
    system: system.name,
    n,
    run,
    p50: s.p50,
    p99: s.p99,
    max: s.max,
    received: s.n,
    rssMb: Math.round(rss),
    cpuMs,
    load,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The whole comparison: each size, each run, every system in turn. */
export async function benchDispatch(
  sizes: number[] = [1000, 10_000],
  runs = 2,
  pgUrl?: string,
  only?: RegExp,
  bursts: 1 | 2 = 1,
): Promise<DispatchRow[]> {
  const rows: DispatchRow[] = [];
  const list = systems(
    pgUrl ? `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=bench_dispatch` : undefined,
  );
  for (const n of sizes)
    for (let run = 1; run <= runs; run++)
      for (const system of list.filter((s) => !only || only.test(s.name))) {
        const fresh =
          system.name.includes('PostgreSQL') && pgUrl ? () => dropBenchSchema(pgUrl) : undefined;
        const row = await runOnce(system, n, run, fresh, bursts);
        console.log(JSON.stringify(row));
        rows.push(row);
        await sleep(1000);
      }
  return rows;
}

async function dropBenchSchema(pgUrl: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query('DROP SCHEMA IF EXISTS bench_dispatch CASCADE');
  await client.end();
}

/** Markdown for BENCHMARKS.md: p99 per system and size, both runs, with RSS and the floor ratio. */
export function dispatchTable(rows: DispatchRow[]): string[] {
  const out = [
    '| system | N | p50 ms | p99 ms (run 1; run 2) | p99 ÷ floor | burst CPU ms | peak RSS MB | 1-min load |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const sizes = [...new Set(rows.map((r) => r.n))];
  for (const n of sizes) {
    const at = rows.filter((r) => r.n === n);
    const names = [...new Set(at.map((r) => r.system))];
    const floorRuns = (run: number) =>
      Math.min(
        ...at.filter((r) => r.system.startsWith('floor') && r.run === run).map((r) => r.p99),
      );
    for (const name of names) {
      const rs = at.filter((r) => r.system === name).sort((a, b) => a.run - b.run);
      const ratios = rs.map((r) => (r.p99 / floorRuns(r.run)).toFixed(2));
      out.push(
        `| ${name} | ${n.toLocaleString('en-US')} | ${rs.map((r) => r.p50).join('; ')} | ${rs.map((r) => r.p99).join('; ')} | ${ratios.join('; ')} | ${rs.map((r) => r.cpuMs).join('; ')} | ${Math.max(...rs.map((r) => r.rssMb))} | ${rs.map((r) => r.load.toFixed(2)).join('; ')} |`,
      );
    }
  }
  return out;
}
