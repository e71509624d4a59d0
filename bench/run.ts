/**
 * `npm run bench`: runs every benchmark in this folder and rewrites
 * BENCHMARKS.md with the results, the machine and the date.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem, type as osType, release } from 'node:os';
import { fileURLToPath } from 'node:url';
import { benchManifest } from './manifest.js';
import { benchSchedules } from './schedule.js';
import { benchShimOverhead } from './shim.js';

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => (n < 1 ? n.toFixed(3) : n.toFixed(2));

async function main(): Promise<void> {
  const started = new Date();
  console.log('schedules…');
  const schedules = await benchSchedules();
  console.log('manifest…');
  const manifest = await benchManifest();
  console.log('shim start-up…');
  const shim = await benchShimOverhead(40);
  const shimMedian = shim[0]?.medianMs ?? 0;
  const bareMedian = shim[2]?.medianMs ?? 0;

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmarks',
    '',
    `Measured ${started.toISOString().slice(0, 10)} on ${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${osType()} ${release()}, Node ${process.version}.`,
    'Reproduce with `npm run bench` (rewrites this file). Numbers move by ±10–20 % between runs on a shared machine.',
    '',
    '## Next-fire computations per second (higher is better)',
    '',
    'Each operation computes the fire that follows the previous one, walking forward from',
    '2026-01-01 and restarting every 500 steps, so all three libraries work in the same years.',
    'croner runs with classic OR day matching (`domAndDow: false`); for UTC rows it runs without a',
    '`timezone` option (its fastest path, valid because this process runs in UTC); cron-parser',
    'iterates `next()` on one parsed expression. Same process, same run.',
    '',
    '| schedule | zone | cronix | croner | cron-parser | cronix ÷ croner |',
    '|---|---|---:|---:|---:|---:|',
    ...schedules.map(
      (r) =>
        `| \`${r.schedule}\` | ${r.zone} | ${fmt(r.cronix)} | ${fmt(r.croner)} | ${fmt(r.cronParser)} | ${(r.cronix / r.croner).toFixed(1)}× |`,
    ),
    '',
    `Target: at least as fast as croner on every row — ${schedules.every((r) => r.cronix >= r.croner) ? 'met' : '**not met**'}.`,
    '',
    '## Manifest validation (256 jobs, 308 schedules, mixed zones and policies)',
    '',
    '| operation | mean (ms) | p99 (ms) | ops/s |',
    '|---|---:|---:|---:|',
    ...manifest.map(
      (r) => `| ${r.what} | ${ms(r.meanMs)} | ${ms(r.p99Ms)} | ${fmt(r.opsPerSec)} |`,
    ),
    '',
    '## Per-fire overhead of `cronix trigger` (lower is better)',
    '',
    'From spawning the process to the request arriving at a local HTTP sink, for a host-scope',
    'Forbid job (spec file, secret, flock, state dir, signing), sequential fires on an idle machine,',
    'built binary (`dist/bin/cronix.mjs`, esbuild bundle). Same run, same sink: `curl`, a bare',
    '`node -e 0` (spawn to exit) and a Node one-liner that only sends the request.',
    '',
    '| what | median (ms) | p95 (ms) | fires |',
    '|---|---:|---:|---:|',
    ...shim.map((r) => `| ${r.what} | ${ms(r.medianMs)} | ${ms(r.p95Ms)} | ${r.n} |`),
    '',
    `Target: median within 40 ms of \`node -e 0\` — ${shimMedian - bareMedian <= 40 ? 'met' : '**not met**'} (${shimMedian - bareMedian >= 0 ? '+' : ''}${(shimMedian - bareMedian).toFixed(1)} ms).`,
    '',
  ];
  const out = fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url));
  writeFileSync(out, `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
}

await main();
