/**
 * The daemon's typed event map: the observability stream and the test seam
 * (tests await events instead of sleeping).
 */
import { EventEmitter } from 'node:events';
import type { NotificationRecord, RunRecord } from './store/types.js';

/** Events and their payloads. */
export interface DaemonEvents {
  /** A run row was recorded (any trigger, any phase). */
  'run-recorded': [run: RunRecord];
  /** A run was launched: its run key is claimed, its first attempt is about to leave. */
  'run-launched': [run: RunRecord];
  /**
   * A run's first attempt started and its row says so (`running`, durable): what reads the
   * ledger after this event sees the run running.
   */
  'run-started': [run: RunRecord];
  /** A run ended (any outcome); its end is durable. */
  'run-ended': [run: RunRecord];
  /**
   * A run left active by an earlier process was ended `crashed` at start-up (it ended before
   * this process: no `run-ended`, but notifications hear of it).
   */
  'run-crashed': [run: RunRecord];
  /** A lane decided for a run (`start`, `replace`, `queue`, `skip`, `queue_full`). */
  admitted: [info: { key: string; decision: string }];
  /** A lane's counts changed: runs launched and not released, runs queued. */
  lane: [info: { key: string; running: number; queued: number }];
  /** A scheduled instant of a job came (fired, caught up or recorded missed): completeness. */
  expected: [info: { key: string; at: number }];
  /** A missed instant is run by catch-up. */
  'catchup-run': [info: { key: string }];
  /** Missed instants too many to record one by one, counted only. */
  'missed-unrecorded': [info: { key: string; count: number }];
  /** The scheduling loop processed `due` items at `now`. */
  tick: [info: { now: number; due: number }];
  /** The loop woke more than a second off its timer (clock jump, suspended process). */
  'timer-drift': [info: { expected: number; actual: number }];
  /**
   * Fires came due more than a minute late (clock jump, suspended process, a
   * blocked loop): they went through the catch-up policy instead of firing.
   */
  downtime: [info: { job: string; from: number; to: number; fires: number }];
  /**
   * A notification was recorded (status `pending`) or one of its delivery attempts was
   * (`pending` again, `delivered` or `failed`).
   */
  notification: [n: NotificationRecord];
  /**
   * On a standby (high availability): a run the leader recorded, started or ended, read back
   * from the store when the leader announced it. For the live views only: the run is the
   * leader's, so it is neither logged nor counted here.
   */
  'replica-run': [info: { change: 'recorded' | 'started' | 'ended'; run: RunRecord }];
  /** On a standby: a notification the leader recorded or tried to deliver, read back. */
  'replica-notification': [n: NotificationRecord];
  /** On a standby: the leader changed more runs at once than it lists; live views reload. */
  'replica-reset': [];
  /** A job was paused or resumed (its pause is durable). */
  'job-paused': [info: { app: string; job: string; paused: boolean }];
  /** Manifests were (re)loaded. */
  reloaded: [info: { jobs: number }];
  /** A store write failed; it is retried after `retryInMs`. */
  'store-error': [info: { op: string; err: string; retryInMs: number }];
  /** A store write was refused: this daemon's leader epoch is over (high availability). */
  fenced: [info: { reason: string }];
  /**
   * High availability: this replica leads at `epoch`. `gap`: from the previous term's lease
   * running out to this term's start (store clock), when there was a previous term.
   */
  leading: [info: { epoch: number; gap?: { from: number; to: number } }];
  /**
   * High availability: this replica stands by; `leader` leads at `epoch` (null: nobody yet).
   * `sameReplica`: the leader has this replica's id — another process of it (a restart under
   * the same `--replica-id`), whose lease must run out first.
   */
  'standing-by': [info: { leader: string | null; epoch: number | null; sameReplica: boolean }];
  /** High availability: this replica's term `epoch` ended for `reason`. */
  'stepped-down': [info: { epoch: number; reason: string }];
  /**
   * A supervised service changed (SPEC §17): an instance's state, pid or readiness (`instance`),
   * or the service's crash loop (`instance` null). For the live views.
   */
  service: [info: { app: string; service: string; instance: number | null }];
  /** Something worth a log line at info level. */
  info: [info: { msg: string }];
  /** A log-worthy problem that did not stop the daemon. */
  warning: [info: { msg: string; err?: string }];
}

/** A typed EventEmitter over {@link DaemonEvents}. */
export class DaemonEmitter extends EventEmitter<DaemonEvents> {}
