/**
 * The backfill part of the store seam (SPEC §16): a backfill is a durable object — its choices,
 * its state, and its plan (the instants it runs, fixed when it is created, so a dry run and the
 * runs are the same list) — and every run it dispatched is linked to the plan item it ran, in the
 * same transaction that records the run. Its progress is read from the runs themselves.
 */
import type { RunOutcome, RunPhase } from './run-types.js';

/** Where a backfill is: dispatching (`running`), or ended — all done, stopped by the safety gate, or cancelled. */
export type BackfillState = 'running' | 'done' | 'stopped' | 'cancelled';

/** Every state. */
export const BACKFILL_STATES: readonly BackfillState[] = [
  'running',
  'done',
  'stopped',
  'cancelled',
];

/** What an operator asks for. Times are epoch milliseconds; `[from, to)`. */
export interface BackfillSpec {
  app: string;
  job: string;
  from: number;
  to: number;
  /** Also leave out instants that have any ended run that ran (failed ones included). */
  onlyMissing: boolean;
  /** At most this many of its runs at once (the job's lane may allow fewer). */
  parallel: number;
  /** Stop after this many failed runs; null: never. */
  stopAfterFailures: number | null;
}

/** One instant of a backfill's plan. */
export interface BackfillItemSpec {
  /** 0-based, in dispatch order (time, then schedule index). */
  position: number;
  scheduledTime: number;
  scheduleIndex: number;
  runKey: string;
}

/** A backfill as created. */
export interface NewBackfill extends BackfillSpec {
  id: string;
  /** Who asked: `cli`, the API token's name, `ui`. */
  createdBy: string;
  createdAt: number;
}

/** How far a backfill's plan has come, from its runs. */
export interface BackfillCounts {
  /** Not dispatched yet, or to be run again (its run ended `crashed`). */
  pending: number;
  /** Dispatched and not ended. */
  active: number;
  succeeded: number;
  /** Ended `app_rejected`, `retries_exhausted` or `internal_error`. */
  failed: number;
  /** Ended otherwise without running (`duplicate`: its key had succeeded meanwhile; `stopped`). */
  other: number;
}

/** A backfill as stored, with its progress. */
export interface BackfillRecord extends NewBackfill {
  state: BackfillState;
  /** Instants in its plan. */
  total: number;
  endedAt: number | null;
  /** Why it ended as it did (`stopped after 3 failed runs`, `cancelled by cli`); null while running or done. */
  reason: string | null;
  counts: BackfillCounts;
}

/** One plan item with the run that ran it last, if any. */
export interface BackfillItem extends BackfillItemSpec {
  runId: string | null;
  phase: RunPhase | null;
  outcome: RunOutcome | null;
}

/** Filter of {@link BackfillStore.listBackfills}; newest first. */
export interface BackfillFilter {
  app?: string;
  job?: string;
  state?: BackfillState;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** The ledger ops of backfills (part of `LedgerOp`, so they are fenced and ordered like runs). */
export type BackfillOp =
  /** Records a new backfill, `running`, with its plan. */
  | { kind: 'backfill-create'; backfill: NewBackfill; items: readonly BackfillItemSpec[] }
  /**
   * Links plan item `position` to the run that runs it (written in the group that records the
   * run). `gone` when the backfill is no longer `running`.
   */
  | { kind: 'backfill-link'; backfillId: string; position: number; runId: string }
  /** Ends a running backfill (`done`, `stopped`, `cancelled`); `gone` when it had ended. */
  | {
      kind: 'backfill-end';
      id: string;
      state: Exclude<BackfillState, 'running'>;
      reason: string | null;
      endedAt: number;
    };

/** What a store keeps of backfills, and the reads a backfill's plan needs. */
export interface BackfillStore {
  getBackfill(id: string): Promise<BackfillRecord | null>;
  listBackfills(filter: BackfillFilter): Promise<BackfillRecord[]>;
  /** The plan of a backfill, by position, each item with the run that ran it last. */
  backfillItems(id: string): Promise<BackfillItem[]>;
  /** Of `runKeys`, those that succeeded (held for good), in one query. */
  succeededKeys(runKeys: readonly string[]): Promise<Set<string>>;
  /**
   * Instants in `[from, to)` of the job that have an ended run that ran — outcome `success`,
   * `app_rejected`, `retries_exhausted`, `crashed` or `internal_error` — whatever its trigger
   * (`--only-missing`).
   */
  ranInstants(app: string, job: string, from: number, to: number): Promise<Set<number>>;
}
