/**
 * A run of the ledger (SPEC §7, §9): its phases, outcomes, triggers, attempt log and record,
 * the types every other store type builds on (`types.ts` re-exports them).
 */

/**
 * Where a run is in its life: `planned` — its run key is claimed and nothing has been sent yet
 * (recorded ahead of its instant, or about to start); `queued` — waiting for room or for its
 * delay; `running` — its first attempt has started; `ended`.
 */
export type RunPhase = 'planned' | 'queued' | 'running' | 'ended';

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
export const RUN_PHASES: readonly RunPhase[] = ['planned', 'queued', 'running', 'ended'];

/**
 * What caused a run. `host`: a host scheduler fired it and the shim (or a ping) reported it to a
 * `serve --watch` (SPEC §15); the watcher's `missed` rows of watched jobs have it too.
 */
export type RunTrigger =
  'schedule' | 'catchup' | 'manual' | 'replay' | 'host' | 'backfill' | 'service';

/** One attempt of a run (SPEC §9 item 7). Times are epoch milliseconds. */
export interface AttemptLogEntry {
  attempt: number;
  startedAt: number;
  durationMs: number;
  /** HTTP status, when a response arrived. */
  status: number | null;
  /** Short reason when the attempt failed (`HTTP 503`, `connect ECONNREFUSED …`). */
  error: string | null;
  /** HTTP: the `traceparent` this attempt sent (absent in rows from before it was recorded). */
  traceparent?: string | null;
  /** HTTP: the first 4 KiB of the response body, secrets redacted (absent: none came). */
  response?: string | null;
  /** A command attempt reported by a host (SPEC §15): its exit code (absent: not reported). */
  exitCode?: number | null;
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
  /**
   * Why a command run's output could not be written (the logs directory's disk was full, …);
   * null when it was, and for HTTP jobs. The run's outcome is the command's either way.
   */
  outputLost: string | null;
  /** Position in the ledger (monotonic; assigned by the store on insert): FIFO order of queues. */
  seq: number;
  // ---- host mode (SPEC §15): absent or null for the daemon's own runs ----
  /** The host that reported the run; null for missed rows and daemon runs. */
  host?: string | null;
  /** A reported command run's exit code. */
  exitCode?: number | null;
  /**
   * The reporting host's clock was this far off the server's (server − host, ms) when it was
   * more than 60 s off (flagged); null otherwise.
   */
  clockSkewMs?: number | null;
  /** The start came later than the job's watch grace: `startedAt − scheduledTime` (ms); else null. */
  latenessMs?: number | null;
  /** The Redis fencing token a global-scope host fire held. */
  fencingToken?: string | null;
  /** A manual run's parameters (SPEC §16): absent for runs without any. */
  params?: RunParams;
}

/** What a manual trigger gave its run, within what the job allows (`jobs[].manual`). */
export interface RunParams {
  /** HTTP jobs: the request body, sent instead of the manifest's. */
  body?: string;
  /** Command jobs: environment variables set on top of the command's `env`. */
  env?: Record<string, string>;
}

/** A new run; the store assigns `seq`. */
export type NewRun = Omit<RunRecord, 'seq'>;

/** One job, named in a batch read. */
export interface JobRef {
  app: string;
  job: string;
}
