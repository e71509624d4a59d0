/**
 * One system of the dispatch comparison, for profiling (not part of `npm run bench`):
 * `node --import tsx bench/one.ts <system regex> <n> [bursts]`, with CRONIX_BENCH_NODE_ARGS
 * for the measured process's node flags (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) and
 * CRONIX_BENCH_KEEP_OUTPUT=<file> to keep what it printed (e.g. with `--trace-gc`);
 * `--import $PWD/bench/memory-timeline.mjs` logs where its resident memory goes. The helpers in
 * `bench/profile/` take heap snapshots and allocation profiles at times relative to the instant
 * and read them and CPU profiles (each file's comment says how).
 */
import { benchDispatch } from './dispatch.js';

const [pattern = 'SQLite', n = '10000', bursts = '1'] = process.argv.slice(2);
const rows = await benchDispatch(
  [Number(n)],
  1,
  undefined,
  new RegExp(pattern),
  bursts === '2' ? 2 : 1,
);
for (const r of rows)
  console.log(`${r.system} n=${r.n} p50=${r.p50} p99=${r.p99} cpu=${r.cpuMs} rss=${r.rssMb}`);
