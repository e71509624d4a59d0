/**
 * Idempotency keys of manual triggers (SPEC §16 "Run parameters"): the first run a key of a job
 * made, kept {@link IDEMPOTENCY_TTL_MS}. Written in the ledger group that records the run, so a
 * key never names a run that was not recorded, and a recorded run's key is never lost.
 */

/** How a run was admitted (the API's `admission`; the same names as `admission/types.ts`). */
export type AdmissionName = 'started' | 'queued' | 'skipped' | 'queue_full' | 'scheduled';

/** How long a key is remembered: a retry within this returns the first run (documented). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** Longest key, characters (printable ASCII). */
export const MAX_IDEMPOTENCY_KEY = 255;

/**
 * Remembers `key` of a job as naming `runId`, unless a key younger than `ttlMs` already does;
 * keys older than `ttlMs` are dropped (so the table stays bounded).
 */
export interface IdempotencyOp {
  kind: 'idempotency-key';
  app: string;
  job: string;
  key: string;
  runId: string;
  admission: AdmissionName;
  at: number;
  ttlMs: number;
}

/** The run a key named, and how it was admitted then. */
export interface IdempotentRun {
  runId: string;
  admission: AdmissionName;
  at: number;
}

/** Idempotency keys of one ledger. */
export interface IdempotencyStore {
  /** The run `key` of the job named, if remembered since `since` (epoch ms). */
  idempotentRun(
    app: string,
    job: string,
    key: string,
    since: number,
  ): Promise<IdempotentRun | null>;
}
