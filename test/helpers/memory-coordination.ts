/**
 * The coordination seam in memory (src/daemon/store/coordination.ts), on an
 * injected clock: the "database" of one test, shared by its replicas. Each
 * replica talks to it through its own {@link MemoryConnection}, which the test
 * can cut (every call fails, the feed subscription is lost) or hold (statements
 * still run at once, but their answers wait until released: a slow network, a
 * renewal whose answer comes too late). Semantics follow the PostgreSQL
 * implementation, and both pass `test/daemon/coordination-contract.ts`.
 */
import type { Clock } from '../../src/fire/types.js';
import {
  FencedError,
  type Claimant,
  type CommandState,
  type CommandStatus,
  type Coordination,
  type Fence,
  type FeedMessage,
  type Lease,
  type LeaseAttempt,
  type PendingCommand,
  type ReplicaSeen,
  type Subscription,
  type TermStore,
} from '../../src/daemon/store/coordination.js';
import type { Store } from '../../src/daemon/store/types.js';

type LeaseRow = Omit<Lease, 'storeNow'>;

interface CommandRow {
  id: number;
  kind: string;
  payload: unknown;
  createdAt: number;
  state: CommandState;
  result: unknown;
  takenEpoch: number | null;
  takenAt: number | null;
  doneAt: number | null;
}

/** Store methods that write (fenced in a term store). */
const WRITES = new Set<string>([
  'write',
  'endCrashed',
  'setPaused',
  'setFreeze',
  'removeFreeze',
  'addSkip',
  'pruneRuns',
  'recordNotifications',
  'updateNotification',
  'pruneNotifications',
]);

/** The shared state: lease, replicas, commands, subscribers. */
export class MemoryCoordination {
  lease: LeaseRow | null = null;
  readonly replicas = new Map<string, { role: string; lastSeen: number }>();
  readonly commands = new Map<number, CommandRow>();
  /** Added to the clock as the store's clock (a replica's clock skew, seen from the store). */
  skewMs = 0;
  private nextId = 1;
  readonly subscribers = new Set<(m: FeedMessage) => void>();

  /** `store`: the ledger the replicas share (term stores fence its writes). */
  constructor(
    readonly clock: Clock,
    readonly store: Store,
  ) {}

  /** A replica's connection. */
  connect(): MemoryConnection {
    return new MemoryConnection(this);
  }

  now(): number {
    return this.clock.now() + this.skewMs;
  }

  publish(m: FeedMessage): void {
    for (const s of [...this.subscribers]) queueMicrotask(() => s(m));
  }

  acquire(c: Claimant, ttlMs: number): LeaseAttempt {
    const now = this.now();
    const l = this.lease;
    const same = l !== null && l.replica === c.replica && l.incarnation === c.incarnation;
    if (l === null || same || l.expiresAt <= now) {
      const renewal = l !== null && same && l.expiresAt > now;
      this.lease = {
        replica: c.replica,
        incarnation: c.incarnation,
        epoch: l === null ? 1 : renewal ? l.epoch : l.epoch + 1,
        expiresAt: now + ttlMs,
        acquiredAt: renewal ? l.acquiredAt : now,
        previousExpiresAt: l === null ? null : renewal ? l.previousExpiresAt : l.expiresAt,
      };
      return { won: true, lease: { ...this.lease, storeNow: now } };
    }
    return { won: false, lease: { ...l, storeNow: now } };
  }

  /** True while `fence` is the live lease. */
  holds(fence: Fence): boolean {
    const l = this.lease;
    return (
      l !== null &&
      l.replica === fence.holder &&
      l.epoch === fence.epoch &&
      l.expiresAt > this.now()
    );
  }

  enqueue(kind: string, payload: unknown): number {
    const id = this.nextId++;
    this.commands.set(id, {
      id,
      kind,
      payload: structuredClone(payload),
      createdAt: this.now(),
      state: 'pending',
      result: undefined,
      takenEpoch: null,
      takenAt: null,
      doneAt: null,
    });
    this.publish({ kind: 'command', id });
    return id;
  }

  /** Commands in `state`, by id. */
  commandsIn(state: CommandState): number[] {
    return [...this.commands.values()].filter((c) => c.state === state).map((c) => c.id);
  }
}

/** One replica's connection to a {@link MemoryCoordination}. */
export class MemoryConnection implements Coordination {
  private isCut = false;
  private gate: Promise<void> | null = null;
  private open: (() => void) | null = null;
  private readonly subscriptions = new Set<() => void>();

  constructor(readonly db: MemoryCoordination) {}

  /** Every call fails from now on, and the feed subscription is lost. */
  cut(): void {
    this.isCut = true;
    for (const lose of [...this.subscriptions]) lose();
  }

  restore(): void {
    this.isCut = false;
  }

  /** From now on statements run at once, but their answers wait until {@link release}. */
  hold(): void {
    this.gate ??= new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
    this.gate = null;
    this.open = null;
  }

  /** Runs `work` now (the database does), answers when the connection lets it. */
  private async call<T>(work: () => T): Promise<T> {
    await Promise.resolve();
    if (this.isCut) throw new Error('connection cut');
    const out = work();
    if (this.gate) await this.gate;
    if (this.isCut) throw new Error('connection cut');
    return out;
  }

  acquireLease(claimant: Claimant, ttlMs: number): Promise<LeaseAttempt> {
    return this.call(() => this.db.acquire(claimant, ttlMs));
  }

  releaseLease(claimant: Claimant, epoch: number): Promise<boolean> {
    return this.call(() => {
      const l = this.db.lease;
      const now = this.db.now();
      if (
        !l ||
        l.replica !== claimant.replica ||
        l.incarnation !== claimant.incarnation ||
        l.epoch !== epoch ||
        l.expiresAt <= now
      )
        return false;
      l.expiresAt = now;
      this.db.publish({ kind: 'released' });
      return true;
    });
  }

  readLease(): Promise<Lease | null> {
    return this.call(() => (this.db.lease ? { ...this.db.lease, storeNow: this.db.now() } : null));
  }

  termStore(fence: Fence): TermStore {
    let revoked = false;
    let refuse: (reason: string) => void = () => undefined;
    const refused = new Promise<string>((resolve) => (refuse = resolve));
    const base = this.db.store;
    return new Proxy(base, {
      get: (target, prop, receiver) => {
        if (prop === 'revoke') return () => (revoked = true);
        if (prop === 'refused') return refused;
        if (prop === 'close') return async () => undefined;
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        const fn = v as (...a: unknown[]) => unknown;
        if (typeof prop !== 'string' || !WRITES.has(prop)) return fn.bind(target);
        return async (...args: unknown[]) => {
          if (revoked) throw new FencedError(`epoch ${fence.epoch} was revoked`);
          await Promise.resolve();
          if (this.isCut) throw new Error('connection cut');
          // the check and the write with no await between: one transaction
          if (!this.db.holds(fence)) {
            const reason = `the lease is no longer held by ${fence.holder} at epoch ${fence.epoch}`;
            refuse(reason);
            throw new FencedError(reason);
          }
          return fn.apply(target, args);
        };
      },
    }) as unknown as TermStore;
  }

  touchReplica(replica: string, role: 'leader' | 'standby'): Promise<void> {
    return this.call(() => {
      const now = this.db.now();
      for (const [name, r] of this.db.replicas)
        if (r.lastSeen < now - 86_400_000) this.db.replicas.delete(name);
      this.db.replicas.set(replica, { role, lastSeen: now });
    });
  }

  listReplicas(withinMs: number): Promise<ReplicaSeen[]> {
    return this.call(() =>
      [...this.db.replicas]
        .filter(([, r]) => r.lastSeen > this.db.now() - withinMs)
        .map(([replica, r]) => ({ replica, role: r.role, lastSeen: r.lastSeen }))
        .sort((a, b) => a.replica.localeCompare(b.replica)),
    );
  }

  storeNow(): Promise<number> {
    return this.call(() => this.db.now());
  }

  enqueueCommand(kind: string, payload: unknown): Promise<number> {
    return this.call(() => this.db.enqueue(kind, payload));
  }

  pendingCommands(limit: number): Promise<PendingCommand[]> {
    return this.call(() =>
      [...this.db.commands.values()]
        .filter((c) => c.state === 'pending')
        .sort((a, b) => a.id - b.id)
        .slice(0, limit)
        .map((c) => ({
          id: c.id,
          kind: c.kind,
          payload: structuredClone(c.payload),
          ageMs: this.db.now() - c.createdAt,
        })),
    );
  }

  takeCommand(id: number, fence: Fence): Promise<boolean> {
    return this.call(() => {
      const c = this.db.commands.get(id);
      if (!c || c.state !== 'pending' || !this.db.holds(fence)) return false;
      Object.assign(c, { state: 'taken', takenEpoch: fence.epoch, takenAt: this.db.now() });
      return true;
    });
  }

  completeCommand(id: number, result: unknown): Promise<boolean> {
    return this.call(() => {
      const c = this.db.commands.get(id);
      if (!c || c.state !== 'taken') return false;
      Object.assign(c, { state: 'done', result: structuredClone(result), doneAt: this.db.now() });
      this.db.publish({ kind: 'done', id });
      return true;
    });
  }

  withdrawCommand(id: number): Promise<boolean> {
    return this.call(() => {
      const c = this.db.commands.get(id);
      if (!c || c.state !== 'pending') return false;
      Object.assign(c, { state: 'abandoned', doneAt: this.db.now() });
      return true;
    });
  }

  commandStatus(id: number): Promise<CommandStatus | null> {
    return this.call(() => {
      const c = this.db.commands.get(id);
      if (!c) return null;
      return {
        state: c.state,
        result: c.state === 'done' ? structuredClone(c.result) : undefined,
        takenEpoch: c.takenEpoch,
      };
    });
  }

  pruneCommands(olderThanMs: number): Promise<number> {
    return this.call(() => {
      const cutoff = this.db.now() - olderThanMs;
      const l = this.db.lease;
      let n = 0;
      for (const c of [...this.db.commands.values()]) {
        const liveTaker = l !== null && l.epoch === c.takenEpoch && l.expiresAt > this.db.now();
        if (
          (c.doneAt !== null && c.doneAt < cutoff) ||
          (c.state === 'pending' && c.createdAt < cutoff) ||
          (c.state === 'taken' && c.takenAt !== null && c.takenAt < cutoff && !liveTaker)
        ) {
          this.db.commands.delete(c.id);
          n++;
        }
      }
      return n;
    });
  }

  publish(message: FeedMessage): Promise<void> {
    return this.call(() => this.db.publish(structuredClone(message)));
  }

  async subscribe(onMessage: (message: FeedMessage) => void): Promise<Subscription> {
    await Promise.resolve();
    if (this.isCut) throw new Error('connection cut');
    let lose!: () => void;
    const closed = new Promise<void>((resolve) => (lose = resolve));
    const deliver = (m: FeedMessage): void => onMessage(m);
    this.db.subscribers.add(deliver);
    const end = (): void => {
      this.db.subscribers.delete(deliver);
      this.subscriptions.delete(end);
      lose();
    };
    this.subscriptions.add(end);
    return { closed, close: async () => end() };
  }
}
