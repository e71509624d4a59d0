/** The real clock: `Date.now()` and an abortable `setTimeout` sleep. */
import type { Clock } from './types.js';

/** Longest single `setTimeout`; Node fires a longer one at once (with a warning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Wall-clock time and timers of this process. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<boolean>((resolve) => {
      if (signal?.aborted) return resolve(false);
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      // a backoff may exceed 24.8 days (max_seconds has no upper bound): chain timers
      let left = Math.max(0, ms);
      const arm = (): void => {
        const step = Math.min(left, MAX_TIMER_MS);
        left -= step;
        timer = setTimeout(() => {
          if (left > 0) return arm();
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        }, step);
      };
      arm();
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
