/**
 * Metrics and notifications listen to the daemon's events (`events.ts`); the
 * rooms that admit, run and end runs only emit them. {@link observeRuns} wires
 * one scheduler's (one leader term's) listeners and returns what detaches them;
 * {@link observeDaemon} the ones that outlive terms (store errors,
 * notification deliveries), once per daemon.
 */
import type { DaemonEmitter, DaemonEvents } from './events.js';
import type { DaemonMetrics } from './metrics.js';
import type { Notifications } from './notifications.js';
import type { RegisteredJob } from './registry.js';
import type { RunRecord } from './store/types.js';

/** Listens to `events` until the returned function is called. */
function listen(events: DaemonEmitter): {
  on<K extends keyof DaemonEvents>(name: K, fn: (...args: DaemonEvents[K]) => void): void;
  off(): void;
} {
  const offs: (() => void)[] = [];
  return {
    on(name, fn) {
      events.on(name, fn as never);
      offs.push(() => events.off(name, fn as never));
    },
    off() {
      for (const off of offs.splice(0)) off();
    },
  };
}

/** Runs' metrics and notifications of one scheduler; returns the detach. */
export function observeRuns(
  events: DaemonEmitter,
  metrics: DaemonMetrics,
  notifications: Notifications | null,
  jobOf: (run: RunRecord) => RegisteredJob | undefined,
): () => void {
  const l = listen(events);
  const key = (run: RunRecord): string => `${run.app}/${run.job}`;
  l.on('admitted', (a) => metrics.dispatched(a.key, a.decision));
  l.on('lane', (c) => {
    metrics.activeRuns(c.key, c.running);
    metrics.queueDepth(c.key, c.queued);
  });
  l.on('expected', (e) => metrics.expected(e.key, e.at));
  l.on('catchup-run', (c) => metrics.backfilled(c.key));
  l.on('missed-unrecorded', (m) => metrics.missedUnrecorded(m.key, m.count));
  l.on('run-launched', (run) => metrics.dispatchLag((metrics.now() - run.scheduledTime) / 1000));
  l.on('run-started', (run) => {
    const job = jobOf(run);
    if (job) notifications?.runStarted(job, run);
  });
  l.on('run-ended', (run) => {
    metrics.runEnded(key(run), run);
    notifications?.runEnded(jobOf(run), run);
  });
  l.on('run-crashed', (run) => notifications?.runEnded(jobOf(run), run));
  return () => l.off();
}

/** The daemon-wide metrics: store errors of any room, notification deliveries. */
export function observeDaemon(events: DaemonEmitter, metrics: DaemonMetrics): () => void {
  const l = listen(events);
  l.on('store-error', (e) => metrics.storeError(e.op));
  l.on('notification', (n) => metrics.notification(n));
  return () => l.off();
}
