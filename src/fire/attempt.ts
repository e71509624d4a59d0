/**
 * What every attempt of the per-fire engine shares, HTTP or command: the fire's input, what one
 * attempt is called with, and how it ended as the engine's loop sees it.
 */
import type { AttemptClass } from '../contract/run.js';
import type { Job } from '../contract/manifest/types.js';
import type { StopSignal } from './stop.js';

/** What to fire. */
export interface FireInput {
  app: string;
  /** The job, normalized (canonical form). */
  job: Job;
  /** UUIDv7, constant across the attempts of this fire. */
  runId: string;
  runKey: string;
  /** Intended fire time, epoch ms. */
  fireTimeMs: number;
  /** When the firing process started (shim) or dispatched (daemon), epoch ms. */
  actualTimeMs: number;
  /** Resolved secret values; the first signs. Empty = unsigned (daemon tests only). */
  secrets: readonly string[];
  /**
   * An HTTP job's resolved `request.headers_from_secrets` (header name → value), sent on every
   * attempt after the static headers. Absent: none.
   */
  headerSecrets?: Readonly<Record<string, string>>;
  /** Last successful fire of this job, epoch ms, when known. */
  previousSuccessMs: number | null;
  /**
   * The epoch of the leader that dispatches this fire (high availability, SPEC §10), when there
   * is one: a command sees it as `CRONIX_LEADER_EPOCH`.
   */
  leaderEpoch?: number;
}

/** What one attempt needs besides the input. */
export interface AttemptCall {
  attempt: number;
  fencingToken: number | undefined;
  signal: StopSignal | undefined;
  /** Whether the fire itself was stopped (as opposed to a lost hold). */
  stopped: () => boolean;
}

/** How an attempt ended, as the engine's loop sees it (HTTP and command alike). */
export interface AttemptEnd {
  cls: AttemptClass | 'aborted';
  /** HTTP status, or a command's exit code. */
  status?: number;
  bodyExcerpt?: string;
  /** Why it failed, in a few words (never a secret). */
  err?: string;
  /** HTTP: the W3C `traceparent` the attempt sent (its span is the attempt's). */
  traceparent?: string;
  /**
   * A 2xx whose app answered `X-Cron-Run-Once: duplicate`: the run key had already succeeded
   * there and nothing was done again (the fire ends `duplicate`, not `success`).
   */
  duplicate?: true;
}
