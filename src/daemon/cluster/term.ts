/**
 * What a replica needs of the scheduler that runs one leader term, and what
 * it tells that scheduler: types only, so the cluster depends on no scheduler
 * class (the daemon's `Scheduler` satisfies {@link TermScheduler}; boot.ts
 * builds one per term).
 */
import type { PauseNote } from '../store/freeze-types.js';
import type { SkipRecord } from '../store/skip-types.js';
import type { Manifest } from '../../contract/manifest/types.js';
import type { DaemonVerbs, StoreHealth } from '../control.js';
import type { DaemonEmitter } from '../events.js';
import type { Store } from '../store/types.js';
import type { ServiceView } from '../services/supervisor.js';

/** The scheduler of one term, as the replica drives it. */
export interface TermScheduler extends DaemonVerbs {
  /**
   * The scheduler's event stream: the replica's own, shared by every term — so
   * the replica learns that a term's write was refused from that term's store
   * (`TermStore.refused`), not from a `fenced` event an earlier term may emit.
   */
  readonly events: DaemonEmitter;
  /** Recovery (the previous leader's runs, the queues), catch-up, then the loop. */
  start(manifests: readonly Manifest[]): Promise<void>;
  reload(manifests: readonly Manifest[]): Promise<void>;
  /** Stops scheduling; running attempts get `graceMs` (0: aborted now). */
  stop(graceMs?: number): Promise<unknown>;
  /** Whether the term's ledger writes fail (null: they go through). */
  storeHealth?(): StoreHealth;
  isPaused(key: string): boolean;
  pauseNote?(key: string): PauseNote | null;
  /** The job's pending skips (SPEC §16). */
  skipsOf?(key: string): SkipRecord[];
  /** Running runs of the job. */
  activeCount(key: string): number;
  queueLength(key: string): number;
  /** What a launched run waits for before its next attempt, or null. */
  waitingFor?(runId: string): string | null;
  /** The supervised services this term runs (SPEC §17). */
  serviceViews?(): Promise<ServiceView[]>;
}

/**
 * What a term tells its scheduler (its `leader` dependency): the epoch sent with
 * every attempt, the check made before every attempt, and how long no one led
 * before this term.
 */
export interface LeaderTerm {
  epoch: number;
  /** Null: go on; else why not (the lease could not be renewed in time, the term ended). */
  mayAttempt(): string | null;
  /**
   * From the previous term's lease running out to this term's start (the
   * store's clock): no leader dispatched in between, so fires of that span
   * recorded `missed` can say "no leader between …" instead of "the daemon was
   * down". Absent for the first term of a store.
   */
  gap?: { from: number; to: number };
}

/** Builds the scheduler of a term on its fenced store. */
export type SchedulerFor = (store: Store, leader: LeaderTerm) => TermScheduler;
