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
  /** A run started its attempts. */
  'run-started': [run: RunRecord];
  /** A run ended (any outcome); its end is durable. */
  'run-ended': [run: RunRecord];
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
  /** Something worth a log line at info level. */
  info: [info: { msg: string }];
  /** A log-worthy problem that did not stop the daemon. */
  warning: [info: { msg: string; err?: string }];
}

/** A typed EventEmitter over {@link DaemonEvents}. */
export class DaemonEmitter extends EventEmitter<DaemonEvents> {}
