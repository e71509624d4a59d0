/**
 * A real `cronix serve` process holding 100,000 registered jobs on
 * minute-granular schedules: start-up time (spawn → `listening`, which is
 * logged once jobs are scheduled), RSS, idle CPU, and `GET /api/v1/jobs` on
 * all of them. Dispatch lag is measured beside the peers in dispatch.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseManifest } from '../src/contract/manifest/index.js';
import type { Manifest } from '../src/contract/manifest/types.js';
import { profileArgs } from './dispatch.js';

const CLI = fileURLToPath(new URL('../dist/bin/cronix.mjs', import.meta.url));

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
        auth: { secret_refs: ['raw:bench-secret-0123456789'] },
      });
    }
    const r = parseManifest({ version: 1, app: `app${m}`, jobs });
    if (!r.ok) throw new Error(JSON.stringify(r.errors.slice(0, 2)));
    out.push(r.manifest);
  }
  return out;
}

/**
 * Seconds after start-up before idle CPU is measured: V8's memory reducer runs its full
 * collection of the start-up garbage once allocation has been low for a while — about 24 s after
 * spawn once start-up took 1.2 s (2026-11-27: 0.34 s of CPU in one Mark-Compact), which a 10 s
 * settle counted as idling.
 */
export const SETTLE_SECONDS = 30;

export interface IdleRow {
  jobs: number;
  /** Median of the fresh starts, s. */
  startupSeconds: number;
  /** Every fresh start, s, in order. */
  startups: number[];
  /** JSON.parse of all the manifest texts in the bench process, best of 3, ms (the VM's speed). */
  referenceMs: number;
  /** CPU of the first {@link SETTLE_SECONDS} after the last start-up, s. */
  settleCpuSeconds: number;
  rssMb: number;
  idleCpuPercent: number;
  /** `GET /api/v1/jobs` answering every job: median of 5, ms. */
  jobsViewMs: number;
  jobsViewBytes: number;
}

/** (b) RSS and idle CPU of a real daemon holding `n` jobs on minute-granular schedules. */
export async function benchIdle(n = 100_000, idleSeconds = 20, starts = 5): Promise<IdleRow> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-bench-idle-'));
  // minute-granular yearly schedules spread over minutes and hours: registered, not firing now
  const all = manifests(
    n,
    'http://127.0.0.1:9',
    (i) => `${i % 60} ${Math.floor(i / 60) % 24} 1 ${1 + (i % 12)} *`,
  );
  const texts = all.map((m) => JSON.stringify(m));
  const files = texts.map((text, i) => {
    const f = join(dir, `m${i}.json`);
    writeFileSync(f, text);
    return f;
  });
  // this VM's speed drifts by tens of percent over minutes: a fixed piece of the same work,
  // timed here, says how fast it ran (the best of 3 JSON.parse passes over these files)
  let referenceMs = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    for (const text of texts) JSON.parse(text);
    referenceMs = Math.min(referenceMs, performance.now() - t0);
  }
  // start-up varies ±20 % between runs on this VM: the figure is the median of `starts` fresh
  // starts (each on an empty data dir); the last one stays up for the other figures
  const startups: number[] = [];
  let child!: ReturnType<typeof spawn>;
  let out = '';
  for (let i = 0; i < starts; i++) {
    const data = join(dir, `data${i}`);
    const started = Date.now();
    child = spawn(
      process.execPath,
      [
        ...profileArgs(),
        CLI,
        'serve',
        ...files,
        '--data-dir',
        data,
        '--listen',
        '127.0.0.1:0',
        '--no-auth',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    let exited = false;
    child.on('exit', () => (exited = true));
    while (!out.includes('"event":"listening"')) {
      if (exited) throw new Error(`cronix serve exited before listening: ${out.slice(-400)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    startups.push((Date.now() - started) / 1000);
    if (i < starts - 1) {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('exit', r));
      await new Promise((r) => setTimeout(r, 1000)); // its writes reach the disk
    }
  }
  const ticks = (): number => {
    const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(f[11]) + Number(f[12]); // utime + stime, clock ticks
  };
  // the first seconds after start-up are not idle: the first-seen checkpoints are written behind
  // it, and V8's memory reducer runs full collections of the start-up garbage
  const s0 = ticks();
  await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
  const settleCpuSeconds = (ticks() - s0) / 100;
  const t0 = ticks();
  const w0 = Date.now();
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const cpu = ((ticks() - t0) / 100 / ((Date.now() - w0) / 1000)) * 100;
  const rss =
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024;
  const url = /"url":"([^"]+)"/.exec(out)?.[1] ?? '';
  const views: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/api/v1/jobs`);
    const body = await res.text();
    views.push(performance.now() - t0);
    if (!res.ok) throw new Error(`GET /api/v1/jobs answered ${res.status}: ${body.slice(0, 200)}`);
    const count = (JSON.parse(body) as { jobs: unknown[] }).jobs.length;
    if (count !== n) throw new Error(`GET /api/v1/jobs listed ${count} of ${n} jobs`);
    bytes = body.length;
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
  views.sort((a, b) => a - b);
  return {
    jobs: n,
    startupSeconds: [...startups].sort((x, y) => x - y)[starts >> 1] ?? 0,
    startups,
    settleCpuSeconds,
    referenceMs: Math.round(referenceMs),
    rssMb: Math.round(rss),
    idleCpuPercent: Math.round(cpu * 100) / 100,
    jobsViewMs: Math.round(views[2] ?? 0),
    jobsViewBytes: bytes,
  };
}
