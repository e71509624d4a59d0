/**
 * The values of admission (`lane.ts`): what a lane decides (a {@link Ticket}),
 * what it asks the pipeline to do ({@link Effect}), and where each of its slots
 * is ({@link SlotState}).
 */
import type { NewRun, RunOutcome, RunRecord } from '../store/types.js';

/** What the lane decided for a new run. */
export type DecisionKind = 'start' | 'replace' | 'queue' | 'skip' | 'queue_full' | 'record';

/** A decided run: the row to record, and how it was decided. */
export interface Ticket {
  /** The row to insert, in its decided shape (planned, queued, or ended). */
  readonly row: NewRun;
  readonly decision: DecisionKind;
  /** Planned ahead of its instant: launched by {@link Lane.due}, not once recorded. */
  readonly ahead: boolean;
  /** Replace: the run it stops, once this row is durable. */
  readonly victim: string | null;
  /** A skipped instant (SPEC §16) this decision consumes: deleted in the row's ledger group. */
  readonly skip: number | null;
}

/** What the pipeline does next, in order. */
export type Effect =
  /** Send the attempts of a run whose run key is claimed (its row is durable). */
  | { kind: 'launch'; run: RunRecord }
  /** Claim a queued run now (the ledger's `start`), then tell {@link Lane.started}. */
  | { kind: 'start'; run: NewRun }
  /** The queued run's delay is over (the ledger's `due`); it waits in the queue. */
  | { kind: 'due'; id: string }
  /**
   * End a run that never sent anything (the ledger's `end`); `slot`: it holds a slot, to be
   * released ({@link Lane.released}) once the end is durable.
   */
  | { kind: 'end'; run: NewRun; outcome: UnstartedOutcome; reason: string; slot: boolean }
  /** Abort the attempts of a launched run (Replace, cancel, shutdown). */
  | { kind: 'abort'; id: string }
  /** A run ended without being launched (recorded ended, or a duplicate): announce it. */
  | { kind: 'ended'; run: RunRecord }
  /** A slot was released (its run's end is durable, or its claim was refused). */
  | { kind: 'released'; id: string }
  /** Something worth a log line. */
  | { kind: 'note'; msg: string };

/** How a run that never sent anything ends. */
export type UnstartedOutcome = Extract<RunOutcome, 'stopped' | 'skipped' | 'queue_full'>;

/** Where a slot's run is. */
export type SlotState =
  /** Its row (or its `start`) is being written: nothing is sent before the ledger answers. */
  | 'claiming'
  /** Its run key is claimed and its instant has not come (planned ahead). */
  | 'claimed'
  /** A Replace newcomer recorded `queued`, waiting for the run it replaces to end. */
  | 'waiting'
  /** Launched: its attempts are being sent. */
  | 'running'
  /** Stopped before it sent anything: its end is being written. */
  | 'ending';

/** A run holding one of its job's places. */
export interface Slot {
  readonly run: NewRun;
  /** The durable row, once recorded (a planned run waiting for its instant). */
  record: RunRecord | null;
  /** Admission order within the lane: Replace stops the lowest. */
  readonly order: number;
  state: SlotState;
  /** Set once the run is being stopped; its end records this reason. */
  stopReason: string | null;
  /** How a stopped run that never sent anything ends: `stopped`, or `skipped` (`cronix skip`). */
  stopOutcome?: 'skipped';
  /**
   * Replace: the run that must have ended before this one sends anything (re-pointed when the
   * run it waited for is undone, `Lane.undo`).
   */
  waitFor: string | null;
  /** Planned ahead of its instant. */
  readonly ahead: boolean;
  /** A planned run whose instant came while its row was still being written. */
  due: boolean;
}

/** The outcome of {@link Lane.cancel}. */
export type CancelResult =
  /** It was queued: taken off the queue, to be ended `stopped`. */
  | { found: 'queued'; run: NewRun }
  /** It holds a slot: the effects stop it; its end is durable once the slot is released. */
  | { found: 'slot'; effects: Effect[] }
  | { found: 'none' };

/** How a trigger, replay or fire was admitted (the API's `admission`). */
export type AdmissionName = 'started' | 'queued' | 'skipped' | 'queue_full' | 'scheduled';

/** Result of a manual trigger or replay. */
export interface TriggerResult {
  run: RunRecord;
  admission: AdmissionName;
}
