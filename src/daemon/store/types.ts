/**
 * The daemon's store seam (SPEC §7): the run ledger, the Enqueue queues, the
 * scheduler checkpoint and paused jobs. SQLite (`sqlite.ts`) is the default;
 * a PostgreSQL store for high availability must pass the same contract suite
 * (`test/daemon/store-contract.ts`). All methods are async so a network store
 * fits; every write is durable when its promise resolves.
 */

/** Where a run is in its life. */
export type RunPhase = 'queued' | 'running' | 'ended';

/** How a run ended (SPEC §7). */
export type RunOutcome =
  | 'success'
  | 'app_rejected'
  | 'retries_exhausted'
  | 'skipped'
  | 'queue_full'
  | 'stopped'
  | 'crashed'
  | 'missed'
  | 'duplicate'
  | 'internal_error';

/** Every outcome, in the order of SPEC §7. */
export const RUN_OUTCOMES: readonly RunOutcome[] = [
  'success',
  'app_rejected',
  'retries_exhausted',
  'skipped',
  'queue_full',
  'stopped',
  'crashed',
  'missed',
  'duplicate',
  'internal_error',
];

/** Every phase. */
export const RUN_PHASES: readonly RunPhase[] = ['queued', 'running', 'ended'];

/** What caused a run. */
export type RunTrigger = 'schedule' | 'catchup' | 'manual' | 'replay';

/** One row of the ledger. Times are epoch milliseconds. */
export interface RunRecord {
  /** UUIDv7. */
  id: string;
  runKey: string;
  app: string;
  job: string;
  /** Schedule index for scheduled/catch-up runs; null for manual runs. */
  scheduleIndex: number | null;
  /** The nominal fire time (run key time). */
  scheduledTime: number;
  trigger: RunTrigger;
  phase: RunPhase;
  outcome: RunOutcome | null;
  attempts: number;
  lastStatus: number | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  /**
   * For `queued` runs: not to be admitted before this instant (delayed manual
   * triggers, jitter); null = as soon as there is room.
   */
  dueAt: number | null;
  /** FIFO position among queued runs of the same job (monotonic; assigned by the store on insert). */
  seq: number;
}

/** A new run; the store assigns `seq`. */
export type NewRun = Omit<RunRecord, 'seq'>;

/** Fields that change as a run progresses. */
export type RunPatch = Partial<
  Pick<
    RunRecord,
    'phase' | 'outcome' | 'attempts' | 'lastStatus' | 'startedAt' | 'endedAt' | 'dueAt'
  >
>;

/** Filter of {@link Store.listRuns}; results are newest first (by `seq`). */
export interface RunFilter {
  app?: string;
  job?: string;
  outcome?: RunOutcome;
  phase?: RunPhase;
  /** Only runs with `seq` below this (pagination cursor). */
  beforeSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** Identifies one schedule of one job. */
export interface ScheduleRef {
  app: string;
  job: string;
  scheduleIndex: number;
}

/** The ledger and scheduler state. */
export interface Store {
  /** Runs numbered migrations; idempotent. */
  migrate(): Promise<void>;
  /** Inserts runs in one durable transaction (a whole tick's fires at once); returns them with `seq`. */
  insertRuns(runs: NewRun[]): Promise<RunRecord[]>;
  /** Applies patches in one durable transaction. Unknown ids are ignored. */
  updateRuns(patches: { id: string; patch: RunPatch }[]): Promise<void>;
  getRun(id: string): Promise<RunRecord | null>;
  listRuns(filter: RunFilter): Promise<RunRecord[]>;
  /** Queued runs (phase `queued`), FIFO by `seq`; of one job when given. */
  queuedRuns(app?: string, job?: string): Promise<RunRecord[]>;
  /** Runs in phase `running`. */
  runningRuns(): Promise<RunRecord[]>;
  /** Whether a run with this run key ended with outcome `success`. */
  hasSucceeded(runKey: string): Promise<boolean>;
  /** The run keys among `runKeys` that already succeeded (one round trip for a whole tick). */
  succeededAmong(runKeys: readonly string[]): Promise<Set<string>>;
  /** Latest `endedAt` of a successful run of the job, or null. */
  lastSuccess(app: string, job: string): Promise<number | null>;
  /** Ends every `running` run as `crashed` at `now`; returns how many. Called at start-up. */
  endCrashed(now: number): Promise<number>;
  /** The last scheduled instant already processed for a schedule, or null if never. */
  getCheckpoint(ref: ScheduleRef): Promise<number | null>;
  /** Records checkpoints in one durable transaction. */
  setCheckpoints(items: (ScheduleRef & { at: number })[]): Promise<void>;
  /** Paused jobs as `app/job` strings. */
  pausedJobs(): Promise<Set<string>>;
  setPaused(app: string, job: string, paused: boolean): Promise<void>;
  /**
   * Deletes ended runs whose `endedAt` is before `endedBefore` (retention);
   * returns how many. Queued and running runs are never deleted.
   */
  pruneRuns(endedBefore: number): Promise<number>;
  /**
   * Counts of runs by outcome for a job since an instant (for the completeness
   * gauge): runs with an outcome whose `scheduledTime >= since`.
   */
  outcomeCounts(
    app: string,
    job: string,
    since: number,
  ): Promise<Partial<Record<RunOutcome, number>>>;
  close(): Promise<void>;
}
