/**
 * What the scheduler's rooms (`recovery.ts`, `verbs.ts`) may use of its core
 * (`scheduler.ts`): the lanes, the ledger writer, the timer and the one run
 * pipeline. An interface of its own so those rooms import no class and the
 * imports stay one-way (scheduler → rooms → core).
 */
import type { Clock } from '../fire/types.js';
import type { DaemonEmitter } from './events.js';
import type { Decision, Lane } from './lane.js';
import type { Ledger } from './ledger.js';
import type { DaemonMetrics } from './metrics.js';
import type { RegisteredJob } from './registry.js';
import type { RunLogs } from './run-logs.js';
import type { LedgerOp, NewRun, RunRecord, Store } from './store/types.js';

/** How a trigger, replay or fire was admitted (the API's `admission`). */
export type AdmissionName = 'started' | 'queued' | 'skipped' | 'queue_full' | 'scheduled';

/** Result of a manual trigger or replay. */
export interface TriggerResult {
  run: RunRecord;
  admission: AdmissionName;
}

/** A user-facing problem with a trigger/cancel/replay request. */
export class SchedulerError extends Error {
  constructor(
    readonly code: 'not_found' | 'conflict' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

/** A new run with its lane's decision, not yet recorded. */
export interface Planned {
  lane: Lane;
  row: NewRun;
  /** Null for rows recorded as they are (missed fires). */
  decision: Decision | null;
}

/** Key of one schedule of one job in the in-memory checkpoint map. */
export const scheduleKey = (key: string, index: number): string => `${key}#${index}`;

/** The scheduler core as its rooms see it. */
export interface SchedulerCore {
  readonly deps: { store: Store; clock: Clock; commands?: { logs: RunLogs } };
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  readonly ledger: Ledger;
  /** Lanes by `app/job`. */
  readonly lanes: Map<string, Lane>;
  /** Delayed manual runs by id. */
  readonly delayed: Map<string, NewRun>;
  /** Last scheduled instant processed per schedule ({@link scheduleKey}). */
  readonly processed: Map<string, number>;
  readonly isStopping: boolean;
  /** Planned runs found at start-up are taken back only when their start is this far ahead. */
  readonly plannedMarginMs: number;
  /** Installs a registry (lanes); returns the writes ending a removed job's queue. */
  install(registry: Map<string, RegisteredJob>, paused?: ReadonlySet<string>): Promise<unknown>[];
  pushNext(lane: Lane, index: number, after: number): void;
  addDelayed(run: NewRun): void;
  checkpointOp(lane: Lane, index: number, at: number): LedgerOp;
  newRun(
    job: RegisteredJob,
    index: number | null,
    nominal: number,
    trigger: NewRun['trigger'],
    extra?: Partial<NewRun>,
  ): NewRun;
  /** The lane decides for a new run, synchronously. */
  plan(lane: Lane, run: NewRun): Planned;
  /** Records planned runs plus `extra` ops as one group, then dispatches them. */
  record(planned: Planned[], extra?: LedgerOp[]): Promise<(TriggerResult | null)[]>;
  /** Admits a run that already has a queued row. */
  admitExisting(lane: Lane, run: NewRun): Promise<TriggerResult | null>;
  /** Ends a run that never started as `stopped` with `reason`. */
  endUnstarted(run: NewRun, reason: string): Promise<RunRecord | null>;
  drain(lane: Lane): void;
  /** The last success of every job with one (read once at start-up, kept up to date after). */
  knownSuccesses(byJob: Map<string, number>): void;
  gauges(lane: Lane): void;
  /** Tells notifications of a run ended outside the pipeline (ended `crashed` at start-up). */
  notifyEnded(run: RunRecord): void;
}
