/**
 * The daemon's proof that it owns its SQLite ledger (SPEC §9 items 6 and 10).
 * `serve.lock` keeps a second daemon from starting on the same data dir, but a
 * lock file can be lost (deleted by hand or by a tmpfiles rule, a data dir on a
 * network filesystem), so the ledger carries its owner itself:
 *
 * - At start-up the daemon claims the ledger's owner row before it recovers
 *   anything. The recorded owner is *provably gone* when it ran on this host and
 *   its process (pid and start time) no longer exists, or it ran on another
 *   host and its heartbeat is older than {@link OWNER_TTL_MS}. Otherwise the
 *   start is refused, naming it: recovery never ends or withdraws the runs of a
 *   live daemon.
 * - While it runs, the daemon renews its heartbeat every
 *   {@link OWNER_HEARTBEAT_MS}; each renewal, and every ledger write, checks that
 *   the row still names it and that the ledger file is the one it opened. When
 *   either is no longer so — or no renewal succeeded for TTL − TTL/3 — no
 *   attempt starts any more ({@link Ownership.mayAttempt}), and the loss is
 *   reported once (`fenced`): the daemon stops dispatching and exits.
 */
import { randomUUID } from 'node:crypto';
import { bootId, processStartTime, readStat } from '../fire/process-group.js';
import type { Clock } from '../fire/types.js';
import { hostIdentity } from '../locks/host.js';
import type { DaemonEmitter } from './events.js';
import type { LedgerOwner, OwnedLedger } from './store/types.js';

/** How often the owner renews its heartbeat. */
export const OWNER_HEARTBEAT_MS = 5000;
/** An owner on another host whose heartbeat is older than this is gone. */
export const OWNER_TTL_MS = 15_000;

/** This process as a ledger owner. */
export function thisProcess(now: number): LedgerOwner {
  return {
    bootId: randomUUID(),
    pid: process.pid,
    pidStart: processStartTime(process.pid),
    host: hostIdentity(),
    startedAt: now,
    heartbeatAt: now,
  };
}

/**
 * Whether a recorded owner is provably gone: on this host, its process (pid and start time) no
 * longer runs, or the machine has rebooted since; elsewhere, its heartbeat is older than the TTL.
 */
export function provablyGone(holder: LedgerOwner, now: number, ttlMs = OWNER_TTL_MS): boolean {
  if (holder.host === hostIdentity() && holder.pidStart !== null) {
    const colon = holder.pidStart.lastIndexOf(':');
    if (holder.pidStart.slice(0, colon) !== bootId()) return true; // rebooted since
    const stat = readStat(holder.pid);
    return !(stat && stat.startTicks === holder.pidStart.slice(colon + 1) && stat.state !== 'Z');
  }
  return now - holder.heartbeatAt > ttlMs;
}

/** Words for a refused claim: who holds the ledger and what to do. */
export function heldBy(path: string, holder: LedgerOwner, now: number): string {
  const age = Math.max(0, Math.round((now - holder.heartbeatAt) / 1000));
  return (
    `the ledger ${path} is in use by another cronix serve (pid ${holder.pid} on ${holder.host}, ` +
    `last heartbeat ${age} s ago); its serve.lock was removed or is on another host. ` +
    'Stop that daemon first, or give this one another --data-dir'
  );
}

/** See the module comment. */
export class Ownership {
  private validUntil = Infinity;
  private lost: string | null = null;
  private readonly wake = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly ledger: OwnedLedger,
    private readonly clock: Clock,
    private readonly events: DaemonEmitter,
    private readonly heartbeatMs = OWNER_HEARTBEAT_MS,
    private readonly ttlMs = OWNER_TTL_MS,
  ) {}

  /** Starts renewing (after a successful claim). */
  start(): void {
    this.renewed();
    this.loop ??= this.run();
  }

  /** Null while this daemon may start attempts; else why not. */
  mayAttempt(): string | null {
    if (this.lost !== null) return this.lost;
    if (performance.now() > this.validUntil)
      return 'this daemon could not renew its ownership of the ledger in time';
    return null;
  }

  /** Stops renewing and gives the ledger up (a clean shutdown: the next start needs no proof). */
  async stop(): Promise<void> {
    this.wake.abort();
    await this.loop;
    if (this.lost === null) await this.ledger.releaseOwnership().catch(() => undefined);
  }

  /** The ledger is not this daemon's any more: no attempt starts from now on. */
  lose(reason: string): void {
    this.lost ??= reason;
  }

  private renewed(): void {
    this.validUntil = performance.now() + this.ttlMs - this.ttlMs / 3;
  }

  private async run(): Promise<void> {
    while (this.lost === null && !this.wake.signal.aborted) {
      if (!(await this.clock.sleep(this.heartbeatMs, this.wake.signal))) return;
      try {
        await this.ledger.heartbeat(this.clock.now());
        this.renewed();
      } catch (err) {
        const e = err as Error;
        if (e.name === 'LedgerLostError') {
          this.lose(e.message);
          this.events.emit('fenced', { reason: e.message });
        } else
          this.events.emit('store-error', {
            op: 'owner',
            err: e.message,
            retryInMs: this.heartbeatMs,
          });
      }
    }
  }
}

/** A store that has a single owner (the SQLite store), or not (PostgreSQL: the lease owns it). */
export function isOwned(store: object): store is OwnedLedger {
  return typeof (store as Partial<OwnedLedger>).claimOwnership === 'function';
}

/**
 * Claims a ledger for this process and starts renewing it; refused (an Error naming the live
 * owner) while its recorded owner is not provably gone. The claim is told to `events`.
 */
export async function claimLedger(
  ledger: OwnedLedger,
  path: string,
  clock: Clock,
  events: DaemonEmitter,
): Promise<Ownership> {
  const now = clock.now();
  const claim = await ledger.claimOwnership(thisProcess(now), (h) => provablyGone(h, now));
  if (!claim.ok) throw new Error(heldBy(path, claim.holder, now));
  const p = claim.previous;
  if (p !== null)
    events.emit('info', {
      msg: `took over the ledger from its previous owner, pid ${p.pid} on ${p.host}, which is gone`,
    });
  const ownership = new Ownership(ledger, clock, events);
  ownership.start();
  return ownership;
}
