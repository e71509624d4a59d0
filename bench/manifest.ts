/** Validation (parse + normalize) time of a 256-job manifest, and of canonicalize + change hashes. */
import { Bench } from 'tinybench';
import {
  canonicalize,
  changeHash,
  parseManifest,
  type Manifest,
} from '../src/contract/manifest/index.js';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'];
const SCHEDULES = [
  '*/5 * * * *',
  '0 9 * * MON-FRI',
  '30 2 * * *',
  '@every 15m',
  '0 0 1,15 * *',
  '@daily',
];

/** A realistic manifest with `n` jobs, every field set on some of them. */
export function bigManifest(n: number): unknown {
  return {
    version: 1,
    app: 'bench-app',
    jobs: Array.from({ length: n }, (_, i) => ({
      name: `job-${String(i).padStart(4, '0')}`,
      ...(i % 5 === 0
        ? { schedules: [SCHEDULES[i % SCHEDULES.length], SCHEDULES[(i + 1) % SCHEDULES.length]] }
        : { schedule: SCHEDULES[i % SCHEDULES.length] }),
      timezone: ZONES[i % ZONES.length],
      request: {
        method: i % 2 === 0 ? 'POST' : 'GET',
        url: `https://app${i % 7}.internal/api/v1/scheduled/job-${i}`,
        headers: { 'X-Tenant': `t${i % 3}`, Accept: 'application/json' },
        body: i % 2 === 0 ? `{"job":${i}}` : '',
      },
      policy: {
        concurrency: ['Forbid', 'Allow', 'Replace', 'Enqueue'][i % 4],
        concurrency_scope: i % 3 === 0 ? 'global' : 'host',
        timeout_seconds: 30 + (i % 60),
        retries: { max_attempts: 1 + (i % 5), min_seconds: 1, max_seconds: 60 },
      },
      auth: { secret_refs: ['env:CRON_SECRET'] },
    })),
  };
}

export interface ManifestRow {
  what: string;
  meanMs: number;
  p99Ms: number;
  opsPerSec: number;
}

/** Benchmarks parse/validate and canonical form + change hashes of a 256-job manifest. */
export async function benchManifest(timeMs = 1000): Promise<ManifestRow[]> {
  const raw = bigManifest(256);
  const text = JSON.stringify(raw);
  const parsed = parseManifest(raw);
  if (!parsed.ok)
    throw new Error(`bench manifest is invalid: ${JSON.stringify(parsed.errors.slice(0, 3))}`);
  const manifest: Manifest = parsed.manifest;
  const bench = new Bench({ time: timeMs, warmupTime: 200 });
  bench.add('parseManifest (validate + normalize), 256 jobs', () => {
    parseManifest(raw);
  });
  bench.add('JSON.parse + parseManifest, 256 jobs', () => {
    parseManifest(JSON.parse(text));
  });
  bench.add('canonicalize, 256 jobs', () => {
    canonicalize(manifest);
  });
  bench.add('changeHash of every (job, schedule), 256 jobs', () => {
    for (const job of manifest.jobs)
      for (let k = 0; k < job.schedules.length; k++) changeHash(manifest, job.name, k);
  });
  await bench.run();
  return bench.tasks.map((task) => {
    const r = task.result as unknown as {
      latency?: { mean: number; p99: number };
      throughput?: { mean: number };
      mean?: number;
      p99?: number;
      hz?: number;
    };
    return {
      what: task.name,
      meanMs: r.latency?.mean ?? r.mean ?? 0,
      p99Ms: r.latency?.p99 ?? r.p99 ?? 0,
      opsPerSec: r.throughput?.mean ?? r.hz ?? 0,
    };
  });
}
