/**
 * Skipped instants in the store (SPEC §16 "Calendars", `cronix skip`): one fire instant of a
 * job that an operator asked not to run. When its fire comes (scheduled or caught up) it is
 * recorded `skipped` with reason `skip: by <who>`, and the skip is deleted in the same ledger
 * group (a {@link SkipDoneOp}), so a skip is consumed exactly when its row is durable, and a
 * restart in between keeps it.
 */

/** One skip as stored: at most one per job and instant. */
export interface SkipRecord {
  app: string;
  job: string;
  /** The nominal fire instant skipped (epoch ms). */
  at: number;
  /** Who asked: `cli`, `ui`, `api` or a token's name. */
  by: string;
  /** When it was asked (epoch ms). */
  since: number;
}

/** Deletes a job's skip of instant `at` (none: nothing happens). */
export interface SkipDoneOp {
  kind: 'skip-done';
  app: string;
  job: string;
  at: number;
}

/** The skips of one ledger. */
export interface SkipStore {
  /** Every skip, by job, then instant. */
  skips(): Promise<SkipRecord[]>;
  /** Records a skip; a skip of the same job and instant already there is kept as it is. */
  addSkip(skip: SkipRecord): Promise<void>;
}

/** The reason recorded on a fire an operator skipped. */
export const skipReason = (s: Pick<SkipRecord, 'by'>): string => `skip: by ${s.by}`;
