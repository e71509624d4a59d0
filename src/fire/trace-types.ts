/** What a run trace holds (see `tracing.ts`); shared by the seam and the SDK half. */

/** One attempt as the trace shows it. Times are epoch milliseconds. */
export interface AttemptTrace {
  attempt: number;
  startMs: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  /** The `traceparent` the attempt sent (HTTP); a command attempt has none. */
  traceparent: string | null;
}

/** One ended run. */
export interface RunTrace {
  runId: string;
  runKey: string;
  /** `app/job`. */
  job: string;
  /** `success`, `app_rejected`, `retries_exhausted`, … (SPEC §7 spelling). */
  outcome: string;
  trigger: string;
  leaderEpoch: number | null;
  startMs: number;
  endMs: number;
  attempts: AttemptTrace[];
}

/** Exports run traces. */
export interface RunTracer {
  record(run: RunTrace): void;
  /** Sends what is buffered and stops; resolves within a few seconds even if the collector is down. */
  shutdown(): Promise<void>;
}
