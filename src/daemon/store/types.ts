/**
 * The daemon's store seam (SPEC §7, §9): the run ledger, the Enqueue queues,
 * the scheduler checkpoints, paused jobs, and the two claims that make
 * "once" a store operation:
 *
 * - the **run-key claim**: a run key is held by at most one running run, and
 *   a key that succeeded stays held for good; a run claims its key in the same
 *   transaction that makes it `running`, so the check and the take are one step;
 * - the **fire claim**: a scheduled instant `(app, job, schedule index, time)`
 *   is recorded at most once (insert-if-absent), whatever the clock or a second
 *   scheduler does.
 *
 * It also holds the notification outbox and grouping state (SPEC §12, see
 * {@link NotificationStore}).
 *
 * SQLite (`sqlite.ts`) is the default; a PostgreSQL store for high
 * availability passes the same contract suite (`test/daemon/store-contract.ts`)
 * and adds its epoch fence to {@link Store.write}. All methods are async so a
 * network store fits; every write is durable when its promise resolves.
 */

export * from './run-types.js';
import type { JobRef, NewRun, RunOutcome, RunParams, RunPhase, RunRecord } from './run-types.js';

/**
 * The process of a command run's current attempt (SPEC §11), recorded so that a daemon that
 * crashed can stop it at its next start. `startTime` identifies the process beyond its pid
 * (boot id and start time, see `src/fire/process-group.ts`); null where the OS does not say.
 */
export interface RunProcess {
  runId: string;
  app: string;
  job: string;
  pid: number;
  startTime: string | null;
}

/** Fields that change as a run progresses. */
export type RunPatch = Partial<
  Pick<
    RunRecord,
    | 'phase'
    | 'outcome'
    | 'attempts'
    | 'lastStatus'
    | 'startedAt'
    | 'endedAt'
    | 'dueAt'
    | 'error'
    | 'attemptLog'
  >
>;

/** The fields of a run's end. */
export type EndPatch = Pick<RunRecord, 'outcome' | 'endedAt' | 'error'> &
  Partial<
    Pick<RunRecord, 'attempts' | 'lastStatus' | 'attemptLog' | 'outputTruncated' | 'outputLost'>
  > & {
    outcome: RunOutcome;
  };

/** Identifies one schedule of one job. */
export interface ScheduleRef {
  app: string;
  job: string;
  scheduleIndex: number;
}

/**
 * One step of a {@link Store.write} transaction. Steps apply in order; a later
 * step sees the earlier ones.
 */
export type LedgerOp =
  /**
   * Records a new run. A `planned` (or `running`) run claims its run key first: when the key
   * is held (running elsewhere, or succeeded) the run is recorded `ended` /
   * `duplicate` instead, with the reason in `error`. An `ended` `success` row
   * marks its key succeeded. A `schedule`/`catchup` run with a schedule index
   * claims its fire first: when that instant already has a row, nothing is
   * recorded (`fire-exists`).
   */
  | { kind: 'insert'; run: NewRun }
  /**
   * A queued run starts: claims its run key and becomes `planned` (due time
   * cleared), to be launched at once. Key held → recorded `ended` / `duplicate`.
   * Not queued → `gone`.
   */
  | { kind: 'start'; id: string; startedAt: number }
  /**
   * A run's attempt number `attempt` has started: a `planned` run becomes `running`, and its
   * attempt count shows the attempt in flight. Not planned or running → `gone`.
   */
  | { kind: 'attempt'; id: string; attempt: number }
  /**
   * A queued or running run ends. A success marks its key succeeded; any other
   * end releases the key if this run held it. Already ended → `gone`.
   */
  | { kind: 'end'; id: string; patch: EndPatch }
  /** A queued run becomes due now (its delay has passed): `dueAt` cleared. */
  | { kind: 'due'; id: string }
  /**
   * A run planned ahead that never sent anything is taken back: its row, its
   * fire claim and its run-key claim are deleted, as if it had never been
   * planned (shutdown before its instant, or found at start-up with its start
   * still in the future). `gone` unless it is `planned` (or `running`) with no attempt.
   */
  | { kind: 'withdraw'; id: string }
  /**
   * A command run started the process of an attempt: its pid and start time replace
   * the previous attempt's. Not planned or running → `gone`.
   */
  | { kind: 'process'; id: string; pid: number; startTime: string | null }
  /** The last scheduled instant processed for a schedule; never moves backwards. */
  | { kind: 'checkpoint'; ref: ScheduleRef; at: number }
  /** Backfills (SPEC §16, `backfill-types.ts`). */
  | BackfillOp
  /** A manual trigger's idempotency key (SPEC §16, `idempotency-types.ts`). */
  | IdempotencyOp
  /** A manual run's parameters, written in the group that records it (SPEC §16). */
  | { kind: 'run-params'; id: string; params: RunParams }
  /** A skip consumed: deleted in the group that records its fire `skipped` (SPEC §16). */
  | SkipDoneOp;

/** What one {@link LedgerOp} did, at the same index as the op. */
export type LedgerResult =
  | { kind: 'recorded'; run: RunRecord }
  | { kind: 'fire-exists' }
  | { kind: 'started'; run: RunRecord }
  | { kind: 'duplicate'; run: RunRecord }
  | { kind: 'ended'; run: RunRecord }
  | { kind: 'gone' }
  | { kind: 'ok' }
  /** Not written: this writer's leader epoch is no longer current (high availability). */
  | { kind: 'fenced' };

/** Filter of {@link Store.listRuns}; results are newest first (by `seq`). */
export interface RunFilter {
  app?: string;
  job?: string;
  outcome?: RunOutcome;
  /** Runs with any of these outcomes (`outcome=failed`, `outcome=a,b`); empty matches none. */
  outcomes?: readonly RunOutcome[];
  phase?: RunPhase;
  /** Only runs with `seq` below this (pagination cursor). */
  beforeSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** The outcomes of a job's newest ended runs, newest first (see {@link Store.recentOutcomes}). */
export interface JobOutcomes extends JobRef {
  outcomes: RunOutcome[];
}

/** A job's runs that are queued or running (see {@link Store.activeCounts}). */
export interface JobActivity extends JobRef {
  running: number;
  queued: number;
}

/** One group of {@link Store.outcomeSummary}: ended runs of a job in one hour, by outcome. */
export interface OutcomeGroup extends JobRef {
  /** Start of the UTC hour of the runs' `scheduledTime` (epoch ms). */
  hour: number;
  /** Trigger `schedule` or `catchup` (they count towards completeness); false for manual and replay. */
  scheduled: boolean;
  outcome: RunOutcome;
  count: number;
}

/** A checkpoint as stored. */
export interface Checkpoint extends ScheduleRef {
  at: number;
}

export * from './notification-types.js';
export * from './host-types.js';
import type { NotificationStore } from './notification-types.js';
import type { HostRunStore } from './host-types.js';
export * from './access-types.js';
import type { AccessStore } from './access-types.js';
export * from './backfill-types.js';
import type { BackfillOp, BackfillStore } from './backfill-types.js';
export * from './dead-letter-types.js';
import type { DeadLetterCount, DeadLetterFilter } from './dead-letter-types.js';
import type { FreezeStore, PauseNote } from './freeze-types.js';
import type { IdempotencyOp, IdempotencyStore } from './idempotency-types.js';
import type { SkipDoneOp, SkipStore } from './skip-types.js';
export * from './skip-types.js';

/**
 * Dead letters (SPEC §16, `dead-letter-types.ts`): the newest failed run of each run key that
 * has not succeeded, unless a newer run of that key is active or failed, or it was dismissed.
 */
export interface DeadLetterStore {
  /** The dead letters matching `filter`, newest first. */
  deadLetters(filter: DeadLetterFilter): Promise<RunRecord[]>;
  /** How many dead letters each job has (jobs with none are absent), in one query. */
  deadLetterCounts(): Promise<DeadLetterCount[]>;
  /**
   * Dismisses dead letters with a note (who, why): each of `runIds` that is a dead letter now
   * leaves the view (the run stays in the ledger); returns the ids dismissed.
   */
  dismissDeadLetters(
    runIds: readonly string[],
    note: string,
    by: string,
    at: number,
  ): Promise<string[]>;
}

/** The ledger and scheduler state. */
export interface Store
  extends
    NotificationStore,
    HostRunStore,
    BackfillStore,
    DeadLetterStore,
    AccessStore,
    FreezeStore,
    IdempotencyStore,
    SkipStore {
  /** Runs numbered migrations; idempotent. */
  migrate(): Promise<void>;
  /**
   * Applies the ops in order in one durable transaction and returns one result
   * per op. Either every op applies or none does (the promise rejects).
   */
  write(ops: readonly LedgerOp[]): Promise<LedgerResult[]>;
  getRun(id: string): Promise<RunRecord | null>;
  /** The runs of `ids` that exist, by `seq`, in one query (a standby's live view). */
  runsByIds(ids: readonly string[]): Promise<RunRecord[]>;
  /**
   * Every job with a queued or running run, with how many of each, in one query
   * (a standby's view of the leader's jobs); jobs with neither are absent.
   */
  activeCounts(): Promise<JobActivity[]>;
  listRuns(filter: RunFilter): Promise<RunRecord[]>;
  /** Queued runs (phase `queued`), FIFO by `seq`; of one job when given. */
  queuedRuns(app?: string, job?: string): Promise<RunRecord[]>;
  /** Runs in phase `planned` or `running`: they hold their run key. */
  runningRuns(): Promise<RunRecord[]>;
  /** The recorded processes of runs in phase `planned` or `running` (command jobs), oldest first. */
  runningProcesses(): Promise<RunProcess[]>;
  /** Which run holds a run key and how: `running` or `succeeded`; null when free. */
  keyHolder(runKey: string): Promise<{ runId: string; state: 'running' | 'succeeded' } | null>;
  /** Latest `endedAt` of a successful run of the job, or null. */
  lastSuccess(app: string, job: string): Promise<number | null>;
  /** Latest `endedAt` of a successful run of every job that has one, by `app/job` (one query). */
  lastSuccesses(): Promise<Map<string, number>>;
  /**
   * Ends every `planned` or `running` run as `crashed` at `now` with `error`, releasing the
   * run keys they held; returns how many. Called at start-up.
   */
  endCrashed(now: number, error: string): Promise<number>;
  /** Every checkpoint (one read at start-up, whatever the number of jobs). */
  checkpoints(): Promise<Checkpoint[]>;
  /** Paused jobs as `app/job` strings. */
  pausedJobs(): Promise<Set<string>>;
  /** Pauses (with its note: why, who, since when) or resumes a job. */
  setPaused(app: string, job: string, paused: boolean, note?: PauseNote): Promise<void>;
  /**
   * Deletes ended runs whose `endedAt` is before `endedBefore` (retention),
   * with the key and fire claims of that age; returns how many runs. Queued and
   * running runs are never deleted.
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
  /**
   * The outcomes of the newest `perJob` ended runs (by `seq`) of each given
   * job, newest first, in **one** query whatever the number of jobs (the jobs
   * view: last outcome and the strip of the last 20). Jobs without an ended run
   * are absent; the order of the result is not specified. Each job is read
   * through its own index range, so the cost grows with jobs × perJob, not
   * with the length of the ledger.
   */
  recentOutcomes(jobs: readonly JobRef[], perJob: number): Promise<JobOutcomes[]>;
  /**
   * Ended runs of the given jobs whose `scheduledTime >= since`, counted by
   * job, UTC hour of `scheduledTime`, scheduled-or-not and outcome, in **one**
   * query (the overview: outcomes over 24 h and completeness per job). Empty
   * groups are absent; the order is not specified.
   */
  outcomeSummary(jobs: readonly JobRef[], since: number): Promise<OutcomeGroup[]>;
  close(): Promise<void>;
}

/** One daemon process that owns (or owned) a ledger (SQLite, SPEC §9 item 10). */
export interface LedgerOwner {
  /** Random per process: two processes never share it, whatever their pid or host. */
  bootId: string;
  pid: number;
  /** The process's start time (`<boot id>:<ticks>`, see `src/fire/process-group.ts`), if known. */
  pidStart: string | null;
  host: string;
  /** Epoch ms. */
  startedAt: number;
  /** Epoch ms of the owner's last heartbeat. */
  heartbeatAt: number;
}

/** The outcome of a claim: owned now (after `previous`, if any), or held by a live owner. */
export type OwnershipClaim =
  { ok: true; previous: LedgerOwner | null } | { ok: false; holder: LedgerOwner };

/**
 * A ledger with a single owner (the SQLite store): the daemon proves it owns the ledger before
 * it recovers anything from it, and every later write checks it still does.
 */
export interface OwnedLedger {
  /** Claims the ledger for `me`, unless its recorded owner is not provably gone (`isGone`). */
  claimOwnership(
    me: LedgerOwner,
    isGone: (holder: LedgerOwner) => boolean,
  ): Promise<OwnershipClaim>;
  /**
   * Renews the owner's heartbeat, checking it still owns the ledger and the file is the one
   * opened. Rejects with a `LedgerLostError` (its `name`) otherwise.
   */
  heartbeat(now: number): Promise<void>;
  /** A clean shutdown: the ledger has no owner any more (while it is still this process's). */
  releaseOwnership(): Promise<void>;
}
