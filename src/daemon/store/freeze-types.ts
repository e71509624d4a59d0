/**
 * Freezes and pause notes in the store (SPEC §16 "Freeze"): who stopped what, why, since when.
 * A freeze's scope is every job (`app` and `job` null), one app's jobs (`job` null) or one job.
 */

/** One freeze as stored; at most one per scope. */
export interface FreezeRecord {
  /** Null: every app. */
  app: string | null;
  /** Null: every job of the scope's app(s). */
  job: string | null;
  reason: string;
  /** Who froze it: `cli`, `ui`, `api` or a token's name. */
  by: string;
  /** Epoch ms. */
  since: number;
  /** Epoch ms at which it ends by itself; null: until unfrozen. */
  until: number | null;
}

/** What a freeze asks for (who and since when are added when it is recorded). */
export type FreezeSpec = Omit<FreezeRecord, 'by' | 'since'>;

/** The note a pause carries: why, who, since when. */
export interface PauseNote {
  reason: string | null;
  by: string | null;
  /** Epoch ms; null for a pause recorded before notes existed. */
  since: number | null;
}

/** Freezes and pause notes of one ledger. */
export interface FreezeStore {
  /** Every freeze, widest scope first. */
  freezes(): Promise<FreezeRecord[]>;
  /** Records a freeze, replacing the one of the same scope. */
  setFreeze(freeze: FreezeRecord): Promise<void>;
  /** Removes the freeze of exactly this scope; returns it, or null when there was none. */
  removeFreeze(app: string | null, job: string | null): Promise<FreezeRecord | null>;
  /** The notes of paused jobs, by `app/job`. */
  pauseNotes(): Promise<Map<string, PauseNote>>;
}

/** Whether a freeze's scope covers the job `app/job`. */
export function freezeCovers(f: FreezeRecord, app: string, job: string): boolean {
  return (f.app === null || f.app === app) && (f.job === null || f.job === job);
}

/** Scope columns: '' stands for "every" (a primary key cannot hold NULL in PostgreSQL). */
export const scopeCol = (v: string | null): string => v ?? '';
export const scopeOf = (v: string): string | null => (v === '' ? null : v);
