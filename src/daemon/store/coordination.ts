/**
 * The coordination seam of high availability (SPEC §10): what replicas sharing
 * one store need to take turns leading, behind one interface so the cluster
 * logic (`src/daemon/cluster/`) reads like the scheduler's and runs on a
 * manual clock in tests.
 *
 * - **The lease** and its **fence**: one leader at a time, named by an epoch
 *   that grows whenever the lease passes to another holder — another replica,
 *   another process of the same replica, or the same process after its term
 *   ended — so an epoch names exactly one term of one process.
 * - **Replicas seen**, and the store's clock (for the skew check).
 * - **The command hand-off**: API verbs a standby passes to the leader. A
 *   command is taken (compare-and-set `pending → taken`) or withdrawn
 *   (`pending → abandoned`), never both, so a standby that answered "failed"
 *   knows the leader will never carry it out.
 * - **The change feed**: wake-ups (a released lease, a new command, a done
 *   command) and the leader's announcements for the standbys' live views.
 *   Best effort: a lost message costs a wake-up or a live update, never a run.
 *
 * PostgreSQL implements it (`pg/coordination.ts`: one lease row on the
 * database's `now()`, LISTEN/NOTIFY); the tests have an in-memory one
 * (`test/helpers/memory-coordination.ts`) and one contract suite for both.
 * Times are epoch milliseconds on the **store's** clock, never a replica's.
 */
import type { Store } from './types.js';

/** Who asks for the lease. */
export interface Claimant {
  /** The replica (`--replica-id`); what `GET /api/v1/cluster` shows. */
  replica: string;
  /**
   * One process's one attempt to lead: a random id, replaced when the process's
   * term ends. The lease is renewed at the same epoch only for the same replica
   * **and** incarnation, so a restarted process, or a frozen old one woken after
   * its replacement started, never shares an epoch with another.
   */
  incarnation: string;
}

/** The lease as the store holds it. */
export interface Lease {
  replica: string;
  incarnation: string;
  epoch: number;
  /** When the lease runs out unless renewed. */
  expiresAt: number;
  /** When this term began. */
  acquiredAt: number;
  /**
   * When the previous term's lease ran out (its expiry, or its release), null
   * before the first term: between that and {@link acquiredAt} no one led.
   */
  previousExpiresAt: number | null;
  /** The store's clock when this was read. */
  storeNow: number;
}

/** What one acquisition attempt found. */
export interface LeaseAttempt {
  /** True when the claimant holds the lease now (taken or renewed). */
  won: boolean;
  /** The lease after the attempt: the claimant's when won, else the live holder's. */
  lease: Lease;
}

/** The right to write of one term: refused once the lease is not that replica's at that epoch. */
export interface Fence {
  holder: string;
  epoch: number;
}

/** A write refused because the writer's epoch is no longer the lease's. */
export class FencedError extends Error {
  override name = 'FencedError';
}

/** A {@link Store} whose every write is fenced by one term's {@link Fence}. */
export interface TermStore extends Store {
  /** After this, every write throws {@link FencedError} without asking the store. */
  revoke(): void;
  /**
   * Resolves, with the reason, the first time the store refuses a write of this
   * term because the lease has moved on (not after {@link revoke}); never
   * rejects. The term is over from then on.
   */
  readonly refused: Promise<string>;
}

/** A replica as last seen. */
export interface ReplicaSeen {
  replica: string;
  role: string;
  lastSeen: number;
}

/** Where a forwarded command is in its life. */
export type CommandState = 'pending' | 'taken' | 'done' | 'abandoned';

/** A command waiting for the leader. */
export interface PendingCommand {
  id: number;
  kind: string;
  payload: unknown;
  /** Its age when read (store clock), ms. */
  ageMs: number;
}

/** A command as its sender sees it. */
export interface CommandStatus {
  state: CommandState;
  /** The leader's answer once `done`; undefined otherwise. */
  result: unknown;
  /** The epoch of the leader that took it; null while pending or withdrawn. */
  takenEpoch: number | null;
}

/** What the leader announces to the standbys' live views (SPEC §10, §13). */
export type LiveChange =
  | { runs: string[]; notifications: string[] }
  | { many: true }
  | { job: { app: string; job: string; paused: boolean } };

/** One message of the change feed. */
export type FeedMessage =
  | { kind: 'released' }
  | { kind: 'command'; id: number }
  | { kind: 'done'; id: number }
  | { kind: 'live'; change: LiveChange };

/** A live subscription to the change feed. */
export interface Subscription {
  /** Resolves when the subscription is lost (its connection dropped) or closed. */
  readonly closed: Promise<void>;
  /** Ends it; idempotent. */
  close(): Promise<void>;
}

/** Lease, replicas, commands and change feed of one shared store. */
export interface Coordination {
  // ---- the lease ----

  /**
   * Takes or renews the lease for `ttlMs` on the store's clock, in one atomic
   * step. Won when nobody holds it live, or when `claimant` (replica and
   * incarnation) holds it live; a live renewal keeps the epoch, any other
   * acquisition increments it. Not won while another claimant holds it live —
   * another replica, or another incarnation of the same replica.
   */
  acquireLease(claimant: Claimant, ttlMs: number): Promise<LeaseAttempt>;
  /**
   * Ends `claimant`'s term `epoch` now (a replica leaving or stepping down) and
   * wakes the standbys (a `released` message); true when it still held it.
   */
  releaseLease(claimant: Claimant, epoch: number): Promise<boolean>;
  /** The lease, or null before anyone ever held it. */
  readLease(): Promise<Lease | null>;
  /**
   * The store seen through one term: every write first checks, atomically with
   * it, that the lease is still `fence.holder`'s at `fence.epoch` and unexpired
   * on the store's clock; else nothing is written and {@link FencedError} is
   * thrown. Reads are not fenced. Closing it does not close the store.
   */
  termStore(fence: Fence): TermStore;

  // ---- replicas and clock ----

  /** Records that `replica` is alive in `role` (and forgets replicas unseen for a day). */
  touchReplica(replica: string, role: 'leader' | 'standby'): Promise<void>;
  /** Replicas seen within `withinMs`, by name. */
  listReplicas(withinMs: number): Promise<ReplicaSeen[]>;
  /** The store's clock now, epoch ms (the caller measures the round trip). */
  storeNow(): Promise<number>;

  // ---- the command hand-off ----

  /** Writes a command for the leader and wakes it (a `command` message); returns its id. */
  enqueueCommand(kind: string, payload: unknown): Promise<number>;
  /** Pending commands, oldest first, at most `limit`. */
  pendingCommands(limit: number): Promise<PendingCommand[]>;
  /**
   * The leader takes a pending command (compare-and-set `pending → taken`),
   * only while `fence` is the live lease; false when it was withdrawn, taken or
   * done already, or the fence is stale. Only a taken command may be carried out.
   */
  takeCommand(id: number, fence: Fence): Promise<boolean>;
  /**
   * Stores the result of a taken command (`taken → done`) and wakes its sender
   * (a `done` message); false when it was not taken.
   */
  completeCommand(id: number, result: unknown): Promise<boolean>;
  /**
   * Withdraws a command nobody has taken (compare-and-set `pending → abandoned`);
   * true when withdrawn — then no leader will ever carry it out — false when a
   * leader took it first (or it is gone).
   */
  withdrawCommand(id: number): Promise<boolean>;
  /** Where command `id` is, or null when there is no such command (pruned). */
  commandStatus(id: number): Promise<CommandStatus | null>;
  /**
   * Deletes commands finished (done or withdrawn) more than `olderThanMs` ago,
   * pending ones that old, and taken ones that old whose taker's term is over;
   * returns how many.
   */
  pruneCommands(olderThanMs: number): Promise<number>;

  // ---- the change feed ----

  /** Sends `message` to every subscriber (of every replica). */
  publish(message: FeedMessage): Promise<void>;
  /**
   * Subscribes to the feed; `onMessage` gets every message published while the
   * subscription lives, in order. Rejects when the feed cannot be reached; the
   * caller resubscribes (with its own backoff) once {@link Subscription.closed}
   * resolves.
   */
  subscribe(onMessage: (message: FeedMessage) => void): Promise<Subscription>;
}
