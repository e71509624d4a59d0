/**
 * The {@link Coordination} seam on PostgreSQL: the lease row and the replicas
 * (`lease.ts`), the commands and the NOTIFY channel (`commands.ts`), and the
 * change feed as one LISTEN connection per subscription. Every statement uses
 * the database's clock. Failures are {@link PgStoreError}s naming the server
 * and the cause.
 */
import type pg from 'pg';
import type {
  Claimant,
  CommandStatus,
  Coordination,
  Fence,
  FeedMessage,
  Lease,
  LeaseAttempt,
  PendingCommand,
  ReplicaSeen,
  Subscription,
  TermStore,
} from '../coordination.js';
import * as commands from './commands.js';
import { createClient, explainPgError, PgStoreError, type PgTarget } from './connect.js';
import * as lease from './lease.js';

/** Coordination of the replicas sharing one schema. */
export class PgCoordination implements Coordination {
  private readonly channel: string;

  constructor(
    private readonly target: PgTarget,
    private readonly pool: pg.Pool,
    private readonly fenced: (fence: Fence) => TermStore,
  ) {
    this.channel = commands.channelOf(target.schema);
  }

  acquireLease(claimant: Claimant, ttlMs: number): Promise<LeaseAttempt> {
    return this.explained(lease.acquireLease(this.pool, claimant, ttlMs));
  }

  releaseLease(claimant: Claimant, epoch: number): Promise<boolean> {
    return this.explained(lease.releaseLease(this.pool, claimant, epoch, this.channel));
  }

  readLease(): Promise<Lease | null> {
    return this.explained(lease.readLease(this.pool));
  }

  termStore(fence: Fence): TermStore {
    return this.fenced(fence);
  }

  touchReplica(replica: string, role: 'leader' | 'standby'): Promise<void> {
    return this.explained(lease.touchReplica(this.pool, replica, role));
  }

  listReplicas(withinMs: number): Promise<ReplicaSeen[]> {
    return this.explained(lease.listReplicas(this.pool, withinMs));
  }

  storeNow(): Promise<number> {
    return this.explained(lease.storeNow(this.pool));
  }

  enqueueCommand(kind: string, payload: unknown): Promise<number> {
    return this.explained(commands.enqueueCommand(this.pool, this.channel, kind, payload));
  }

  pendingCommands(limit: number): Promise<PendingCommand[]> {
    return this.explained(commands.pendingCommands(this.pool, limit));
  }

  takeCommand(id: number, fence: Fence): Promise<boolean> {
    return this.explained(commands.takeCommand(this.pool, id, fence));
  }

  completeCommand(id: number, result: unknown): Promise<boolean> {
    return this.explained(commands.completeCommand(this.pool, this.channel, id, result));
  }

  withdrawCommand(id: number): Promise<boolean> {
    return this.explained(commands.withdrawCommand(this.pool, id));
  }

  commandStatus(id: number): Promise<CommandStatus | null> {
    return this.explained(commands.commandStatus(this.pool, id));
  }

  pruneCommands(olderThanMs: number): Promise<number> {
    return this.explained(commands.pruneCommands(this.pool, olderThanMs));
  }

  publish(message: FeedMessage): Promise<void> {
    return this.explained(commands.notify(this.pool, this.channel, message));
  }

  /** `work`, its failure explained. */
  private async explained<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      throw Object.assign(new PgStoreError(explainPgError(err, this.target)), { cause: err });
    }
  }

  /** One LISTEN connection; it is lost on its first error or end. */
  async subscribe(onMessage: (message: FeedMessage) => void): Promise<Subscription> {
    const client = createClient(this.target);
    let lost!: () => void;
    const closed = new Promise<void>((resolve) => (lost = resolve));
    client.on('notification', (n) => {
      const m = commands.messageOf(n.payload ?? '');
      if (m) onMessage(m);
    });
    const close = async (): Promise<void> => {
      lost();
      await client.end().catch(() => undefined);
    };
    client.on('error', () => void close());
    client.on('end', () => lost());
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await close();
      throw Object.assign(new PgStoreError(explainPgError(err, this.target)), { cause: err });
    }
    return { closed, close };
  }
}
