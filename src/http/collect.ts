/**
 * A full garbage collection on request, for the moment a burst of clients has left (the event
 * hub, `events.ts`). V8 collects its old space only when allocation presses it; an idle daemon
 * allocates little, so 1,000 closed streams and 20,000 refused requests stayed in the heap (RSS
 * 80 → 210 MB, minutes later still there). Asking once, after the burst, gives it back.
 *
 * `gc` is V8's own function, exposed at run time (`--expose-gc`, as the `expose-gc` package
 * does) rather than by a flag on the `cronix` command line. Null when the runtime refuses.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collector: (() => void) | null | undefined;

/** Most collections one release makes. */
const MAX_ROUNDS = 10;

/**
 * Gives memory back after a burst: a full collection now, then one every two seconds while the
 * heap V8 holds from the system still shrinks (at most {@link MAX_ROUNDS}). V8 frees the objects
 * in the first collection but hands emptied pages back only over the next ones (after its
 * concurrent sweeping, and its young generation a step at a time): one collection left a
 * 150 MB heap at 150 MB, a series brought it back to 20 MB. Null when no collector can be had.
 */
export function memoryReleaser(): (() => void) | null {
  const gc = fullCollector();
  if (gc === null) return null;
  return () => {
    let rounds = 0;
    let held = Infinity;
    let still = 0;
    const round = (): void => {
      gc();
      const now = process.memoryUsage().heapTotal;
      still = now < held ? 0 : still + 1;
      held = Math.min(held, now);
      if (++rounds >= MAX_ROUNDS || still >= 2) return;
      setTimeout(round, 2_000).unref();
    };
    round();
  };
}

/** V8's full collection, or null when it cannot be had. */
export function fullCollector(): (() => void) | null {
  if (collector !== undefined) return collector;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return (collector = exposed);
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    collector = typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    collector = null;
  }
  return collector;
}
