/**
 * What the API, the CLI's logging and the web UI need of a daemon, whether it
 * is one scheduler (SQLite) or a replica of a cluster (PostgreSQL), leading or
 * standing by: the jobs, their state, the verbs, the event stream and metrics.
 * `Scheduler` implements it; so does `Cluster`, which hands the verbs to its
 * scheduler while it leads and forwards them to the leader through the store
 * while it stands by.
 */
import type { TriggerResult } from './core.js';
import type { DaemonEmitter } from './events.js';
import type { DaemonMetrics } from './metrics.js';
import type { RegisteredJob } from './registry.js';
import type { RunRecord } from './store/types.js';

/** The cluster as one replica sees it (SPEC §10, `GET /api/v1/cluster`). */
export interface ClusterView {
  self: { replica: string; role: 'leader' | 'standby' };
  leader: { replica: string; epoch: number; leaseExpiresAt: number } | null;
  replicas: { replica: string; lastSeen: number; role: string }[];
}

/** A daemon as its API sees it. */
export interface DaemonControl {
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  /** The daemon's clock (epoch ms). */
  now(): number;
  /** Jobs by `app/job`. */
  jobs(): ReadonlyMap<string, RegisteredJob>;
  nextFireOf(key: string): number | null;
  isPaused(key: string): boolean;
  /** Running runs of the job. */
  activeCount(key: string): number;
  queueLength(key: string): number;
  trigger(
    app: string,
    job: string,
    when?: { at?: number; afterSeconds?: number },
  ): Promise<TriggerResult>;
  cancel(runId: string): Promise<RunRecord>;
  replay(runId: string): Promise<TriggerResult>;
  setPaused(app: string, job: string, paused: boolean): Promise<void>;
  /** Shutting down: no new runs are started. */
  readonly isStopping: boolean;
  /** Only in a cluster. */
  cluster?(): Promise<ClusterView>;
}
