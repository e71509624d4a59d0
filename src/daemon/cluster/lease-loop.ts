/**
 * The lease loop of one replica (SPEC §10): who leads, and until when. It owns
 * the lease and the term's deadline; the replica (`replica.ts`) owns what a
 * term runs. Every timer is on the injected clock.
 *
 * - **Turns.** Every TTL/3, start to start (or at once when woken), a standby tries to take the
 *   lease and a leader renews it, in one statement on the store's clock; then
 *   the replica's chores run (a standby's views, the leader's pruning).
 * - **Incarnations.** The loop claims the lease as (replica id, incarnation):
 *   a random id of this process, replaced whenever a term ends. A claimant
 *   leads at most one term, so every term — of another replica, of a restarted
 *   process under the same `--replica-id`, or of this process after it stepped
 *   down — has an epoch of its own, and a frozen process woken after its
 *   replacement led can neither renew nor write under a current epoch.
 * - **Stepping down in time.** A renewal sent at T keeps the term until
 *   T + TTL − TTL/3 (by the injected clock and, when given, a monotonic one);
 *   past that the term ends on its own (a watchdog timer, and a check before
 *   every attempt), before the lease can have expired for anyone else.
 * - **Skew.** Every minute the loop compares the clock with the store's; while
 *   they differ by more than {@link MAX_SKEW_MS} it does not take the lease.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../fire/types.js';
import type { DaemonEmitter } from '../events.js';
import type { DaemonMetrics } from '../metrics.js';
import type { Claimant, Coordination, Lease, LeaseAttempt } from '../store/coordination.js';
import { ClockTimer, Deadline } from './timers.js';

/** Least time between the end of a turn and the start of the next (a slow store's turns). */
const MIN_TURN_GAP_MS = 50;
/** Largest clock difference with the store at which a replica may take the lease. */
export const MAX_SKEW_MS = 2000;
/** How often the clock is compared with the store's. */
export const SKEW_CHECK_MS = 60_000;

/** What the loop needs. */
export interface LeaseLoopDeps {
  coordination: Coordination;
  replicaId: string;
  /** Lease time-to-live (`--lease-seconds`). */
  leaseMs: number;
  clock: Clock;
  /** A monotonic ms counter for the term's deadline besides the clock (production: `performance.now`). */
  monotonic?: () => number;
  events: DaemonEmitter;
  metrics: DaemonMetrics;
  /** A fresh incarnation id; default a random UUID. */
  incarnation?: () => string;
}

/** What the loop tells its replica. */
export interface LeaseLoopHooks {
  /** The lease was won at a new epoch: a term begins (its deadline is already set). */
  began(lease: Lease): void;
  /** Term `epoch` is over: nothing of it may act any more. */
  ended(epoch: number, reason: string): void;
  /** After the lease, every turn: the chores of a leader or a standby. */
  chores(leading: boolean): Promise<void>;
}

interface Holding {
  epoch: number;
  claimant: Claimant;
  validUntil: Deadline;
}

/** The lease loop; see the module comment. */
export class LeaseLoop {
  private claimant: Claimant;
  private holding: Holding | null = null;
  private readonly timer: ClockTimer;
  private readonly watchdog: ClockTimer;
  private turn: Promise<void> = Promise.resolve();
  private skewMs = 0;
  private lastSkewCheck = -Infinity;
  /** The leader last told in a `standing-by` event (`replica@epoch`), or null. */
  private told: string | null = null;
  /** No new term (shutting down); a held lease is still renewed. */
  private leaving = false;
  private stopped = false;

  constructor(
    private readonly deps: LeaseLoopDeps,
    private readonly hooks: LeaseLoopHooks,
  ) {
    this.claimant = this.fresh();
    this.timer = new ClockTimer(deps.clock);
    this.watchdog = new ClockTimer(deps.clock);
  }

  /** Starts the turns (the first one at once). */
  start(): void {
    this.schedule(0);
  }

  /** Runs a turn now (a released lease: try at once). */
  wake(): void {
    this.schedule(0);
  }

  /** The current term's epoch, or null on a standby. */
  get epoch(): number | null {
    return this.holding?.epoch ?? null;
  }

  /** Null while term `epoch` is current and within its deadline; else why not. */
  mayAttempt(epoch: number): string | null {
    const h = this.holding;
    return h && h.epoch === epoch && !h.validUntil.passed()
      ? null
      : `no longer the leader of epoch ${epoch}`;
  }

  /** Ends term `epoch` now, if it is the current one (a refused write, a failed start-up). */
  stepDown(epoch: number, reason: string): void {
    if (this.holding?.epoch === epoch) void this.end(reason);
  }

  /** Takes no new term from now on; a held lease is still renewed until {@link leave}. */
  retire(): void {
    this.leaving = true;
  }

  /** Stops the turns (waits for the current one); the term, if any, goes on until {@link leave}. */
  async stop(): Promise<void> {
    this.leaving = true;
    this.stopped = true;
    this.timer.clear();
    await this.turn;
  }

  /** Ends the term, if any, and releases the lease so a standby leads at once. */
  async leave(): Promise<void> {
    this.leaving = true;
    await this.end('stopping');
    this.watchdog.clear();
  }

  private fresh(): Claimant {
    return {
      replica: this.deps.replicaId,
      incarnation: this.deps.incarnation?.() ?? randomUUID(),
    };
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer.set(ms, () => {
      this.turn = this.turn
        .then(() => this.tick())
        .catch((err: Error) => {
          this.deps.events.emit('warning', { msg: 'cluster turn failed', err: err.message });
        });
    });
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const { clock, coordination, replicaId, leaseMs } = this.deps;
    const began = clock.now();
    try {
      await this.checkSkew();
      const leading = await this.lease();
      await coordination.touchReplica(replicaId, leading ? 'leader' : 'standby');
      await this.hooks.chores(leading);
    } catch (err) {
      this.deps.metrics.storeError('lease');
      this.deps.events.emit('store-error', {
        op: 'lease',
        err: (err as Error).message,
        retryInMs: leaseMs / 3,
      });
    } finally {
      // turns start TTL/3 apart, not TTL/3 after the last one ended: a standby whose chores took
      // a second on a loaded machine took the lease of a frozen leader ~2 s past TTL + TTL/3
      // (clamped: a wall clock that jumped during the turn moves no turn by more than TTL/3)
      const took = clock.now() - began;
      this.schedule(Math.min(leaseMs / 3, Math.max(MIN_TURN_GAP_MS, leaseMs / 3 - took)));
    }
  }

  private async checkSkew(): Promise<void> {
    const { clock, coordination, metrics } = this.deps;
    if (Math.abs(clock.now() - this.lastSkewCheck) < SKEW_CHECK_MS) return;
    const before = clock.now();
    const at = await coordination.storeNow();
    const after = clock.now();
    this.skewMs = at - (before + after) / 2;
    this.lastSkewCheck = after;
    metrics.skew(this.skewMs / 1000);
  }

  /** One acquisition or renewal; true when this replica leads after it. */
  private async lease(): Promise<boolean> {
    const { coordination, leaseMs, events } = this.deps;
    if (!this.holding && (this.leaving || Math.abs(this.skewMs) > MAX_SKEW_MS)) {
      if (!this.leaving)
        events.emit('warning', {
          msg: `not taking the lease: this clock is ${Math.round(-this.skewMs)} ms off the store's (more than ${MAX_SKEW_MS} ms)`,
        });
      this.standingBy(await coordination.readLease());
      return false;
    }
    const claimant = this.claimant;
    let sent = this.instant();
    let got: LeaseAttempt;
    try {
      got = await coordination.acquireLease(claimant, leaseMs);
    } catch {
      // a pooled connection broken by a database restart fails once: retry on a fresh one
      sent = this.instant();
      got = await coordination.acquireLease(claimant, leaseMs);
    }
    if (claimant !== this.claimant) {
      // this claimant's term ended while the answer was on its way: it leads no other
      if (got.won) await coordination.releaseLease(claimant, got.lease.epoch).catch(() => false);
      return false;
    }
    this.deps.metrics.epochSeen(got.lease.epoch);
    const held = this.holding;
    if (!got.won) {
      if (held) await this.end('another replica holds the lease');
      this.standingBy(got.lease);
      return false;
    }
    if (held && held.epoch === got.lease.epoch) {
      this.renewed(held, sent);
      return true;
    }
    if (held || this.leaving) {
      // our lease lapsed before this renewal (a frozen process) and was taken anew: that term
      // is over, and a claimant leads one term only; the next turn starts afresh
      await this.end(`the lease lapsed and was taken again at epoch ${got.lease.epoch}`);
      await coordination.releaseLease(claimant, got.lease.epoch).catch(() => false);
      if (!this.leaving) this.schedule(0);
      return false;
    }
    const term: Holding = {
      epoch: got.lease.epoch,
      claimant,
      validUntil: Deadline.passed(this.deps.clock),
    };
    this.holding = term;
    this.told = null;
    this.renewed(term, sent);
    this.hooks.began(got.lease);
    return true;
  }

  /** Both clocks now. */
  private instant(): { wall: number; mono: number | null } {
    return { wall: this.deps.clock.now(), mono: this.deps.monotonic?.() ?? null };
  }

  /** A renewal sent at `sent` succeeded: the term is good until TTL − TTL/3 after it. */
  private renewed(term: Holding, sent: { wall: number; mono: number | null }): void {
    const { leaseMs, clock, monotonic } = this.deps;
    term.validUntil = Deadline.after(clock, monotonic, sent, leaseMs - leaseMs / 3);
    this.armWatchdog(term);
  }

  private armWatchdog(term: Holding): void {
    this.watchdog.set(term.validUntil.leftMs() + 1, () => {
      if (this.holding !== term) return;
      if (term.validUntil.passed()) void this.end('the lease could not be renewed in time');
      else this.armWatchdog(term);
    });
  }

  /**
   * Ends the current term: retires its claimant, tells the replica, and
   * releases the lease (best effort: a standby need not wait for it to expire).
   */
  private async end(reason: string): Promise<void> {
    const held = this.holding;
    if (!held) return;
    this.holding = null;
    this.watchdog.clear();
    this.claimant = this.fresh();
    this.hooks.ended(held.epoch, reason);
    await this.deps.coordination.releaseLease(held.claimant, held.epoch).catch(() => false);
  }

  /** Tells, once per leader, who leads while this replica stands by. */
  private standingBy(lease: Lease | null): void {
    const live = lease && lease.expiresAt > lease.storeNow ? lease : null;
    const key = live ? `${live.replica}@${live.epoch}` : '';
    if (key === this.told) return;
    this.told = key;
    this.deps.events.emit('standing-by', {
      leader: live?.replica ?? null,
      epoch: live?.epoch ?? null,
      sameReplica: live?.replica === this.deps.replicaId,
    });
  }
}
