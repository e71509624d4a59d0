/**
 * Heap snapshots of a dispatch bench's `cronix serve` at times relative to its instant (not part
 * of `npm run bench`):
 *
 *   HEAP_SNAPSHOT_AT=-4000,-100 CRONIX_BENCH_NODE_ARGS="--import $PWD/bench/profile/heap-snapshot.mjs" \
 *     node --import tsx bench/one.ts 'cronix serve \(SQLite\)' 10000
 *
 * writes `/tmp/heap<offset>.<pid>.heapsnapshot` (read them with `heap-diff.mjs`). One offset per
 * run is the honest way: a snapshot of a 10,000-job daemon stops it for 10–60 s, so the later
 * ones of a list (and the burst) come late. A snapshot after the last arrival is cut off: the
 * bench kills the daemon then.
 */
import { writeHeapSnapshot } from 'node:v8';
import { atInstant } from './instant.mjs';

for (const offset of (process.env.HEAP_SNAPSHOT_AT ?? '-100').split(',').map(Number))
  atInstant(offset, () => writeHeapSnapshot(`/tmp/heap${offset}.${process.pid}.heapsnapshot`));
