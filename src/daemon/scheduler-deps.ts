/** What the scheduler is built from (`scheduler.ts`). */
import type { Clock, Transport } from '../fire/types.js';
import type { ResolvedNotifier } from '../notify/resolve.js';
import type { DaemonEmitter } from './events.js';
import type { ExecutionDeps } from './execution.js';
import type { DaemonMetrics } from './metrics.js';
import type { RegisteredJob } from './registry.js';
import type { LedgerOp, LedgerResult, Store } from './store/types.js';

/**
 * Host mode (SPEC §15) as a scheduler sees it: the watched jobs (their runs notify like its
 * own), and the detection it runs while it leads, through its ledger (`watch/watch.ts`).
 */
export interface WatchTerm {
  jobOf(key: string): RegisteredJob | undefined;
  startTerm(ledger: {
    submit(ops: readonly LedgerOp[], urgent?: boolean): Promise<LedgerResult[]>;
  }): Promise<() => Promise<void>>;
}

/** Dependencies of the scheduler: those of the execution room, and these. */
export interface SchedulerDeps extends Omit<ExecutionDeps, 'ledger' | 'events'> {
  store: Store;
  clock: Clock;
  transport: Transport;
  /** Uniform [0, 1) for random jitter (injected for tests). */
  random?: () => number;
  /** Ended runs older than this are deleted (checked hourly); undefined = keep forever. */
  retentionMs?: number;
  /** How long before their instant fires are planned; default {@link PLAN_AHEAD_MS}; 0: never. */
  planAheadMs?: number;
  /**
   * At start-up, a planned row whose start is more than this ahead is taken back (it was planned
   * by a process that died). 0 on one machine; the replicas' allowed clock skew in a cluster.
   */
  plannedMarginMs?: number;
  /** Event stream and metrics to use (kept across the terms of a replica); new ones by default. */
  events?: DaemonEmitter;
  metrics?: DaemonMetrics;
  /**
   * Supervised services (SPEC §17): absent, the manifests' services are not run (tests of jobs
   * only). Needs `commands` (the runner, the host environment, the run logs).
   */
  services?: {
    /** A service's resolved `env_from_secrets`. */
    secretEnvFor(app: string, service: string): Readonly<Record<string, string>>;
    /** Longest SIGTERM→SIGKILL wait of an orphaned instance (HA: a third of the lease). */
    orphanGraceCapSeconds?: number;
  };
  /** Notifications (SPEC §12): an app's resolved notifiers by name; absent: nothing is notified. */
  notifiersOf?(app: string): ReadonlyMap<string, ResolvedNotifier> | undefined;
  /** Watched jobs (`serve --watch`): detected while this scheduler leads. */
  watch?: WatchTerm;
}

/** Fires due within this are planned ahead: their rows recorded before their instant. */
export const PLAN_AHEAD_MS = 1500;
