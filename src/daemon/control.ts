/**
 * What the API, the CLI's logging and the web UI need of a daemon, whether it
 * is one scheduler (SQLite) or a replica of a cluster (PostgreSQL), leading or
 * standing by: the jobs, their state, the verbs, the event stream and metrics.
 * `Scheduler` implements it; so does `Cluster`, which hands the verbs to its
 * scheduler while it leads and forwards them to the leader through the store
 * while it stands by.
 */
import type { TriggerOptions, TriggerResult } from './core.js';
import type { DaemonEmitter } from './events.js';
import type { DaemonMetrics } from './metrics.js';
import type { RegisteredJob } from './registry.js';
import type { BackfillRecord, BackfillSpec, RunRecord } from './store/types.js';
import type { FreezeRecord, FreezeSpec, PauseNote } from './store/freeze-types.js';
import type { ServiceAction, ServiceActionResult, ServiceView } from './services/supervisor.js';
import type { SkipRecord } from './store/skip-types.js';
import type { SkipResult, SkipWhat } from './verbs.js';

/**
 * What a daemon is to the jobs (`/healthz`, `cronix_leader`): the leader or a
 * standby of a cluster, or a single daemon on its own store (it leads itself).
 */
export type DaemonRole = 'leader' | 'standby' | 'single';

/** The cluster as one replica sees it (SPEC §10, `GET /api/v1/cluster`). */
export interface ClusterView {
  self: { replica: string; role: 'leader' | 'standby' };
  leader: { replica: string; epoch: number; leaseExpiresAt: number } | null;
  replicas: { replica: string; lastSeen: number; role: string }[];
}

/** Ledger writes failing: for how long (ms) and the last error; null while they succeed. */
export type StoreHealth = { failingForMs: number; error: string } | null;

/** The verbs an operator uses on a daemon's jobs and runs (a cluster's standby forwards them). */
export interface DaemonVerbs {
  trigger(
    app: string,
    job: string,
    when?: { at?: number; afterSeconds?: number },
    opts?: TriggerOptions,
  ): Promise<TriggerResult>;
  cancel(runId: string): Promise<RunRecord>;
  replay(runId: string): Promise<TriggerResult>;
  /** Pauses (with a note: why, who) or resumes a job's scheduled fires. */
  setPaused(
    app: string,
    job: string,
    paused: boolean,
    note?: { reason: string | null; by: string },
  ): Promise<void>;
  /** Freezes a scope (SPEC §16): nothing new is admitted for it; absent: not supported here. */
  freeze?(spec: FreezeSpec, by: string): Promise<FreezeRecord>;
  /** Ends the freeze of exactly this scope. */
  unfreeze?(app: string | null, job: string | null, by: string): Promise<FreezeRecord>;
  /**
   * Skips a job's next fire or one fire instant (SPEC §16 "Calendars"), asked for by `by`;
   * absent: not supported here.
   */
  skip?(app: string, job: string, what: SkipWhat, by: string): Promise<SkipResult>;
  /** Starts a backfill (SPEC §16) asked for by `by` (`cli`, a token's name). */
  backfill(spec: BackfillSpec, by: string): Promise<BackfillRecord>;
  /** Cancels a running backfill; its runs in flight finish. */
  cancelBackfill(id: string, by: string): Promise<BackfillRecord>;
  /**
   * `start`, `stop` or `restart` of a supervised service's instances (SPEC §17); absent where a
   * daemon runs no services.
   */
  serviceAction?(
    action: ServiceAction,
    app: string,
    service: string,
    instance?: number,
  ): Promise<ServiceActionResult[]>;
}

/** A daemon as its API sees it. */
export interface DaemonControl extends DaemonVerbs {
  readonly events: DaemonEmitter;
  readonly metrics: DaemonMetrics;
  /** The daemon's clock (epoch ms). */
  now(): number;
  /** Jobs by `app/job`. */
  jobs(): ReadonlyMap<string, RegisteredJob>;
  nextFireOf(key: string): number | null;
  isPaused(key: string): boolean;
  /** A paused job's note (why, who, since when); absent or null: none. */
  pauseNote?(key: string): PauseNote | null;
  /** A job's skipped instants whose fire has not come, earliest first (SPEC §16). */
  skipsOf?(key: string): SkipRecord[];
  /** The freezes in force, widest scope first (SPEC §16). */
  freezeList?(): Promise<FreezeRecord[]>;
  /** Running runs of the job. */
  activeCount(key: string): number;
  /**
   * What a launched run waits for before its next attempt (`rate limit <key> (<n>/s)`), or null.
   * Known to the daemon that runs it (in HA, the leader; a standby answers null).
   */
  waitingFor?(runId: string): string | null;
  queueLength(key: string): number;
  /** Shutting down: no new runs are started. */
  readonly isStopping: boolean;
  /** Only in a cluster. */
  cluster?(): Promise<ClusterView>;
  /** This daemon's role now; absent: `single` (a daemon on its own store). */
  role?(): DaemonRole;
  /** Whether its ledger writes go through (null) or since how long and why they fail. */
  storeHealth?(): StoreHealth;
  /** The supervised services and their instances (SPEC §17); absent: none are run. */
  serviceViews?(): Promise<ServiceView[]>;
}
