/**
 * Where a measured process's resident memory goes, over time (not part of `npm run bench`):
 *
 *   CRONIX_BENCH_NODE_ARGS="--import $PWD/bench/memory-timeline.mjs" \
 *     node --import tsx bench/one.ts 'cronix serve \(SQLite\)' 10000
 *
 * Appends a line to `/tmp/memory-timeline.<pid>.txt` each time RSS has moved by 4 MB or more
 * (sampled every 5 ms): ms since start, RSS, V8's committed heap and what it uses, external
 * memory, V8's own malloc'd memory (the optimizing compiler's zones: at a burst's start it
 * rose to 30–40 MB for ~70 ms) and the rest (code, native libraries, node's own buffers).
 */
import { appendFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

const file = `/tmp/memory-timeline.${process.pid}.txt`;
const t0 = performance.now();
const mb = (bytes) => Math.round(bytes / 1e6);
let last = 0;

setInterval(() => {
  const m = process.memoryUsage();
  if (Math.abs(m.rss - last) < 4e6) return;
  last = m.rss;
  const malloced = getHeapStatistics().malloced_memory;
  appendFileSync(
    file,
    `${Math.round(performance.now() - t0)} ms rss=${mb(m.rss)} heap=${mb(m.heapTotal)} ` +
      `used=${mb(m.heapUsed)} external=${mb(m.external)} v8-malloc=${mb(malloced)} ` +
      `other=${mb(m.rss - m.heapTotal - malloced)}\n`,
  );
}, 5).unref();
