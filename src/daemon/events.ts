/**
 * The daemon's typed event map: the observability stream and the test seam
 * (tests await events instead of sleeping).
 */
import { EventEmitter } from 'node:events';
import type { RunRecord } from './store/types.js';

/** Events and their payloads. */
export interface DaemonEvents {
  /** A run row was admitted or recorded (any trigger). */
  'run-recorded': [run: RunRecord];
  /** A run started its attempts. */
  'run-started': [run: RunRecord];
  /** A run ended (any outcome). */
  'run-ended': [run: RunRecord];
  /** The scheduling loop woke up at `now` and processed `due` fires. */
  tick: [info: { now: number; due: number }];
  /** The loop woke more than a second off its timer (clock jump, suspended process). */
  'timer-drift': [info: { expected: number; actual: number }];
  /** Manifests were (re)loaded. */
  reloaded: [info: { jobs: number }];
  /** A log-worthy problem that did not stop the daemon. */
  warning: [info: { msg: string; err?: string }];
}

/** A typed EventEmitter over {@link DaemonEvents}. */
export class DaemonEmitter extends EventEmitter<DaemonEvents> {}
