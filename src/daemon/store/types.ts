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

import type { NotifierType, NotifyEvent } from '../../contract/manifest/types.js';
import type { GroupState } from '../../notify/group.js';

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

/** One attempt of a run (SPEC §9 item 7). Times are epoch milliseconds. */
export interface AttemptLogEntry {
  attempt: number;
  startedAt: number;
  durationMs: number;
  /** HTTP status, when a response arrived. */
  status: number | null;
  /** Short reason when the attempt failed (`HTTP 503`, `connect ECONNREFUSED …`). */
  error: string | null;
}

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
   * triggers); null = as soon as there is room.
   */
  dueAt: number | null;
  /** Why the run ended as it did, in a few words; never a secret. Null for a success. */
  error: string | null;
  /** Every attempt sent, in order; empty when none was. */
  attemptLog: AttemptLogEntry[];
  /**
   * A command job's output went past `max_output_bytes` and the rest was dropped (SPEC §11).
   * Always false for HTTP jobs.
   */
  outputTruncated: boolean;
  /** Position in the ledger (monotonic; assigned by the store on insert): FIFO order of queues. */
  seq: number;
}

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

/** A new run; the store assigns `seq`. */
export type NewRun = Omit<RunRecord, 'seq'>;

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
  Partial<Pick<RunRecord, 'attempts' | 'lastStatus' | 'attemptLog' | 'outputTruncated'>> & {
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
   * Records a new run. A `running` run claims its run key first: when the key
   * is held (running elsewhere, or succeeded) the run is recorded `ended` /
   * `duplicate` instead, with the reason in `error`. An `ended` `success` row
   * marks its key succeeded. A `schedule`/`catchup` run with a schedule index
   * claims its fire first: when that instant already has a row, nothing is
   * recorded (`fire-exists`).
   */
  | { kind: 'insert'; run: NewRun }
  /**
   * A queued run starts: claims its run key and becomes `running` (due time
   * cleared). Key held → recorded `ended` / `duplicate`. Not queued → `gone`.
   */
  | { kind: 'start'; id: string; startedAt: number }
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
   * still in the future). `gone` unless it is `running` with no attempt.
   */
  | { kind: 'withdraw'; id: string }
  /**
   * A running command run started the process of an attempt: its pid and start time replace
   * the previous attempt's. Not running → `gone`.
   */
  | { kind: 'process'; id: string; pid: number; startTime: string | null }
  /** The last scheduled instant processed for a schedule; never moves backwards. */
  | { kind: 'checkpoint'; ref: ScheduleRef; at: number };

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
  phase?: RunPhase;
  /** Only runs with `seq` below this (pagination cursor). */
  beforeSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** One job, named in a batch read. */
export interface JobRef {
  app: string;
  job: string;
}

/** The outcomes of a job's newest ended runs, newest first (see {@link Store.recentOutcomes}). */
export interface JobOutcomes extends JobRef {
  outcomes: RunOutcome[];
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

/** Where a notification's delivery is: waiting for (another) attempt, or done either way. */
export type NotificationStatus = 'pending' | 'delivered' | 'failed';

/** Delivery states, for filters and the OpenAPI document. */
export const NOTIFICATION_STATUSES: readonly NotificationStatus[] = [
  'pending',
  'delivered',
  'failed',
];

/** One notification: an event for one notifier, its message and its delivery. Times epoch ms. */
export interface NotificationRecord {
  /** Position (monotonic, assigned by the store): newest first in lists. */
  seq: number;
  /** UUIDv7; sent as `X-Cron-Notification-Id` so receivers can dedupe. */
  id: string;
  /** `<run id>/<event>/<notifier>`: one notification per event and notifier, ever. */
  eventKey: string;
  event: NotifyEvent;
  app: string;
  job: string;
  runId: string;
  notifier: string;
  notifierType: NotifierType;
  /** Events this message stands for (grouping). */
  count: number;
  /** The one human line. */
  text: string;
  /** The JSON body, exactly as sent on every attempt. */
  body: string;
  status: NotificationStatus;
  attempts: number;
  /** HTTP status (webhook) or SMTP reply code of the last attempt, when there was one. */
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  /** When a pending notification is tried next; null once it is done. */
  nextAttemptAt: number | null;
  /** When it was delivered or given up. */
  endedAt: number | null;
}

/** A notification to record; the store assigns `seq`. */
export type NewNotification = Omit<NotificationRecord, 'seq'>;

/** One open grouping state: a job's `failed` or `missed` events for one notifier. */
export interface NotifyGroupRow {
  notifier: string;
  kind: 'failed' | 'missed';
  state: GroupState;
}

/** What an event changes, decided from the job's open groups (see {@link NotificationStore}). */
export interface NotifyPlan {
  /** Groups to write; a closed state deletes the row. */
  groups: NotifyGroupRow[];
  /** Notifications to record; one whose `eventKey` exists is skipped. */
  notifications: NewNotification[];
}

/** Fields of a delivery attempt's result. */
export type NotificationPatch = Pick<
  NotificationRecord,
  'status' | 'attempts' | 'lastStatus' | 'lastError' | 'nextAttemptAt' | 'endedAt'
>;

/** Filter of {@link NotificationStore.listNotifications}; newest first. */
export interface NotificationFilter {
  app?: string;
  job?: string;
  event?: NotifyEvent;
  status?: NotificationStatus;
  beforeSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/**
 * The notification outbox (SPEC §12). Grouping is a store operation: an event's
 * decision reads the job's open groups and writes the groups and the notifications
 * in **one** transaction (fenced by the leader's epoch in a cluster), so one event
 * is grouped and recorded once whatever else runs. Delivery state is durable, so a
 * restarted daemon (or a new leader) delivers what is still pending.
 */
export interface NotificationStore {
  /**
   * In one transaction: reads the open groups of the job, calls `plan` with them
   * (synchronously), writes its groups and inserts its notifications (skipping any
   * whose `eventKey` is already recorded). Returns the notifications inserted.
   */
  recordNotifications(
    app: string,
    job: string,
    plan: (groups: NotifyGroupRow[]) => NotifyPlan,
  ): Promise<NotificationRecord[]>;
  /** Pending notifications whose next attempt is at or before `now`, soonest first. */
  dueNotifications(now: number, limit: number): Promise<NotificationRecord[]>;
  /** The earliest next attempt of a pending notification, or null when none is pending. */
  nextNotificationAt(): Promise<number | null>;
  /** Records a delivery attempt of a pending notification; false when it is not pending. */
  updateNotification(id: string, patch: NotificationPatch): Promise<boolean>;
  listNotifications(filter: NotificationFilter): Promise<NotificationRecord[]>;
  getNotification(id: string): Promise<NotificationRecord | null>;
  /**
   * Retention (`--retention-days`): deletes the notifications whose delivery ended (delivered or
   * failed) before `endedBefore`; pending ones are kept whatever their age. Returns the count.
   */
  pruneNotifications(endedBefore: number): Promise<number>;
}

/** The ledger and scheduler state. */
export interface Store extends NotificationStore {
  /** Runs numbered migrations; idempotent. */
  migrate(): Promise<void>;
  /**
   * Applies the ops in order in one durable transaction and returns one result
   * per op. Either every op applies or none does (the promise rejects).
   */
  write(ops: readonly LedgerOp[]): Promise<LedgerResult[]>;
  getRun(id: string): Promise<RunRecord | null>;
  listRuns(filter: RunFilter): Promise<RunRecord[]>;
  /** Queued runs (phase `queued`), FIFO by `seq`; of one job when given. */
  queuedRuns(app?: string, job?: string): Promise<RunRecord[]>;
  /** Runs in phase `running`. */
  runningRuns(): Promise<RunRecord[]>;
  /** The recorded processes of runs in phase `running` (command jobs), oldest run first. */
  runningProcesses(): Promise<RunProcess[]>;
  /** Which run holds a run key and how: `running` or `succeeded`; null when free. */
  keyHolder(runKey: string): Promise<{ runId: string; state: 'running' | 'succeeded' } | null>;
  /** Latest `endedAt` of a successful run of the job, or null. */
  lastSuccess(app: string, job: string): Promise<number | null>;
  /** Latest `endedAt` of a successful run of every job that has one, by `app/job` (one query). */
  lastSuccesses(): Promise<Map<string, number>>;
  /**
   * Ends every `running` run as `crashed` at `now` with `error`, releasing the
   * run keys they held; returns how many. Called at start-up.
   */
  endCrashed(now: number, error: string): Promise<number>;
  /** Every checkpoint (one read at start-up, whatever the number of jobs). */
  checkpoints(): Promise<Checkpoint[]>;
  /** Paused jobs as `app/job` strings. */
  pausedJobs(): Promise<Set<string>>;
  setPaused(app: string, job: string, paused: boolean): Promise<void>;
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
