/**
 * What the scheduler's rooms (`recovery.ts`, `verbs.ts`) may use of its core
 * (`scheduler.ts`): methods and the rooms' own objects, never the core's maps.
 * An interface of its own so those rooms import no class and the imports stay
 * one-way (scheduler → rooms → core).
 */
import type { Clock } from '../fire/types.js';
import type { Lane } from './admission/lane.js';
import type { DaemonEmitter } from './events.js';
import type { LeaderCheck } from './execution.js';
import type { Ledger } from './ledger.js';
import type { Pipeline } from './pipeline.js';
import type { RegisteredJob } from './registry.js';
import type { RunLogs } from './run-logs.js';
import type { Schedules } from './schedules.js';
import type { NewRun, RunParams, Store } from './store/types.js';

export type { AdmissionName, TriggerResult } from './admission/types.js';

/** What a manual trigger may carry besides its time (SPEC §16 "Run parameters"). */
export interface TriggerOptions {
  /** A retried call with the same key (per job) returns the first run, not a second one. */
  idempotencyKey?: string;
  /** The run's parameters, within what the job allows (`jobs[].manual`, `run-params.ts`). */
  params?: RunParams;
}

/** A user-facing problem with a trigger/cancel/replay request. */
export class SchedulerError extends Error {
  constructor(
    readonly code: 'not_found' | 'conflict' | 'unavailable' | 'invalid_request',
    message: string,
  ) {
    super(message);
  }
}

/** The scheduler core as its rooms see it. */
export interface SchedulerCore {
  readonly deps: {
    store: Store;
    clock: Clock;
    commands?: { logs: RunLogs };
    leader?: LeaderCheck;
  };
  readonly events: DaemonEmitter;
  readonly ledger: Ledger;
  readonly schedules: Schedules;
  readonly pipeline: Pipeline;
  readonly isStopping: boolean;
  /** Planned runs found at start-up are taken back only when their start is this far ahead. */
  readonly plannedMarginMs: number;
  /** The lane of a job in the manifests (not removed), if any. */
  lane(key: string): Lane | undefined;
  /** Every lane, removed jobs' included (until their last run ends). */
  lanes(): Iterable<Lane>;
  /** Installs a registry (lanes); returns the writes ending a removed job's queue. */
  install(registry: Map<string, RegisteredJob>, paused?: ReadonlySet<string>): Promise<unknown>[];
  newRun(
    job: RegisteredJob,
    index: number | null,
    nominal: number,
    trigger: NewRun['trigger'],
    extra?: Partial<NewRun>,
  ): NewRun;
  /** Reads the durable freezes and tells the lanes (start-up, after {@link install}). */
  loadFreezes(now: number): Promise<void>;
  /** Holds a delayed manual run until its due time. */
  addDelayed(run: NewRun): void;
  /** Takes a delayed run back (cancel); undefined when none is held. */
  takeDelayed(id: string): NewRun | undefined;
  /** The last success of every job with one (read once at start-up, kept up to date after). */
  knownSuccesses(byJob: Map<string, number>): void;
}
