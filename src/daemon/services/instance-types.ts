/** What an instance is, needs and tells (`instance.ts`), as types. */
import type { EffectiveService } from '../../contract/manifest/effective.js';
import type { Clock, CommandRunner } from '../../fire/types.js';
import type { DaemonEmitter } from '../events.js';
import type { Ledger } from '../ledger.js';
import type { RunLogs } from '../run-logs.js';
import type { RunRecord } from '../store/types.js';

/** Where an instance is. */
export type InstanceState = 'starting' | 'running' | 'ready' | 'backoff' | 'stopping' | 'stopped';

/** An instance as the API shows it. */
export interface InstanceView {
  index: number;
  state: InstanceState;
  /** The current process, if one runs. */
  pid: number | null;
  /** The ledger row of the current (or last) start. */
  runId: string | null;
  /** When the current process started (ms), or null. */
  startedAt: number | null;
  /** Starts after the first one (automatic and manual restarts). */
  restarts: number;
  /** Ready per its check (null: the service has none). */
  ready: boolean | null;
  /** The last exit: when, the ledger outcome and why. */
  lastExit: { at: number; outcome: string; error: string | null } | null;
  /** While in backoff: when it starts again. */
  nextStartAt: number | null;
  /** This instance is in a crash loop. */
  crashLoop: boolean;
}

/** What an instance needs. */
export interface InstanceDeps {
  app: string;
  service: string;
  index: number;
  clock: Clock;
  runner: CommandRunner;
  /** `PATH HOME LANG TZ` of the daemon. */
  hostEnv: Readonly<Record<string, string>>;
  logs: RunLogs;
  ledger: Ledger;
  events: DaemonEmitter;
  /** Null while this daemon may start processes (owner, leader); else why not. */
  mayStart(): string | null;
  /** Longest SIGTERM→SIGKILL wait of the lifeline's watcher after the daemon died (s). */
  orphanGraceCapSeconds: number;
}

/** What an instance tells and asks its service. */
export interface InstanceHooks {
  /** The service's definition now and its resolved secrets (a reload changes them). */
  definition(): { service: EffectiveService; secretEnv: Readonly<Record<string, string>> };
  /** The process exited on its own at `at` (counts towards a crash loop); `run` is its row. */
  exited(index: number, at: number, run: RunRecord | null): void;
  /** The process of `run` stayed up `reset_after_seconds`. */
  stable(index: number, run: RunRecord): void;
  /** Whether the service counts this instance in a crash loop. */
  looping(index: number): boolean;
  /** Something changed (state, pid, readiness). */
  changed(index: number): void;
}
