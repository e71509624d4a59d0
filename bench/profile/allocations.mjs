/**
 * What a dispatch bench's `cronix serve` allocates around its instant, by function, the objects
 * collected since included (not part of `npm run bench`):
 *
 *   ALLOC_FROM=-200 ALLOC_FOR=2500 CRONIX_BENCH_NODE_ARGS="--import $PWD/bench/profile/allocations.mjs" \
 *     node --import tsx bench/one.ts 'cronix serve \(SQLite\)' 10000
 *   node bench/profile/alloc-summary.mjs /tmp/alloc.<pid>.heapprofile
 *
 * V8's sampling heap profiler (one sample per 4 KiB), started ALLOC_FROM ms from the instant for
 * ALLOC_FOR ms, or until the bench stops it after the last arrival. Node's `--heap-prof` keeps only the objects still alive at its end; what a burst
 * costs in scavenges is mostly what died young, so this asks the inspector for both.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { atInstant } from './instant.mjs';

const from = Number(process.env.ALLOC_FROM ?? -200);
const span = Number(process.env.ALLOC_FOR ?? 2500);
const session = new Session();
session.connect();
let sampling = false;
/** Stops sampling and writes the profile (at the end of the span, or when the bench stops it). */
const stop = () => {
  if (!sampling) return;
  sampling = false;
  // a same-thread session answers synchronously: written before the daemon's own handler exits
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) console.error(err);
    else writeFileSync(`/tmp/alloc.${process.pid}.heapprofile`, JSON.stringify(result.profile));
  });
};
atInstant(from, () => {
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  sampling = true;
  setTimeout(stop, span).unref();
});
// the bench stops the daemon (SIGTERM) at its last arrival, which may come before the span ends
process.prependListener('SIGTERM', stop);
