/**
 * Ledger retention: ended runs older than `--retention-days` are deleted, and
 * so are notifications whose delivery ended before then (pending ones stay) and the audit
 * log's rows of before then,
 * checked at most once per {@link PRUNE_EVERY_MS}. A failing prune is reported
 * and tried again at the next check; it never stops the scheduler.
 */
import type { DaemonEmitter } from './events.js';
import type { Store } from './store/types.js';

/** How often retention runs. */
export const PRUNE_EVERY_MS = 3_600_000;

/** Prunes the ledger now and then. */
export class Retention {
  private last = -Infinity;

  constructor(
    private readonly store: Store,
    private readonly events: DaemonEmitter,
    /** Ended runs older than this are deleted; undefined = keep forever. */
    private readonly retentionMs: number | undefined,
    /** After a prune: deletes what lived beside the pruned runs (command logs); returns a count. */
    private readonly afterPrune?: (cutoff: number) => Promise<number> | undefined,
  ) {}

  /** Prunes when an hour has passed since the last prune. */
  async maybePrune(now: number): Promise<void> {
    if (this.retentionMs === undefined || now - this.last < PRUNE_EVERY_MS) return;
    this.last = now;
    const cutoff = now - this.retentionMs;
    try {
      const pruned = await this.store.pruneRuns(cutoff);
      if (pruned > 0)
        this.events.emit('info', {
          msg: `retention: deleted ${pruned} run(s) that ended before ${new Date(cutoff).toISOString()}`,
        });
      const notifications = await this.store.pruneNotifications(cutoff);
      if (notifications > 0)
        this.events.emit('info', {
          msg: `retention: deleted ${notifications} notification(s) delivered or failed before ${new Date(cutoff).toISOString()}`,
        });
      // the audit log is kept as long as runs (SPEC §18)
      const audit = await this.store.pruneAudit(cutoff);
      if (audit > 0)
        this.events.emit('info', {
          msg: `retention: deleted ${audit} audit row(s) recorded before ${new Date(cutoff).toISOString()}`,
        });
      const logs = (await this.afterPrune?.(cutoff)) ?? 0;
      if (logs > 0)
        this.events.emit('info', { msg: `retention: deleted the output of ${logs} run(s)` });
    } catch (err) {
      this.events.emit('store-error', {
        op: 'prune',
        err: (err as Error).message,
        retryInMs: PRUNE_EVERY_MS,
      });
    }
  }
}
