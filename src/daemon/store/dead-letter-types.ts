/**
 * The dead-letter part of the store seam (SPEC §16): runs that ended failed (`app_rejected`,
 * `retries_exhausted`, `crashed`, `internal_error`) whose run key has not succeeded since — the
 * newest such run of each key, unless a newer run of that key is still active or the run was
 * dismissed (with a note: who and why).
 */
import type { RunOutcome } from './run-types.js';

/** Filter of {@link DeadLetterStore.deadLetters}; newest first (by `seq`). */
export interface DeadLetterFilter {
  app?: string;
  job?: string;
  /** Only these failed outcomes (default: all four). */
  outcomes?: readonly RunOutcome[];
  /** `scheduledTime >= from`. */
  from?: number;
  /** `scheduledTime < to`. */
  to?: number;
  /** Only runs with `seq` below this (pagination cursor). */
  beforeSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** Dead letters of one job. */
export interface DeadLetterCount {
  app: string;
  job: string;
  count: number;
}

/** A dismissal: the dead letter leaves the view; the run stays in the ledger. */
export interface Dismissal {
  runId: string;
  note: string;
  /** `cli`, `ui` or `api`. */
  by: string;
  at: number;
}
