/**
 * Batched recording of reports (SPEC §15): every report waits for a durable write before it is
 * answered, and the reports that arrive while one write is in progress go together into the
 * next (a group commit: one SQLite transaction, one fsync, for hundreds of reports). Writes go
 * to the store directly, unfenced: any replica accepts reports (they are facts from hosts, not
 * a leader's decisions).
 */
import type { HostRunStore, ReportResult, ReportWrite } from '../store/host-types.js';

/** Most reports in one transaction. */
export const MAX_BATCH = 2000;

interface Pending {
  write: ReportWrite;
  resolve(r: ReportResult): void;
  reject(err: Error): void;
}

/** See the module comment. */
export class Ingest {
  #pending: Pending[] = [];
  #flushing = false;

  constructor(
    private readonly store: Pick<HostRunStore, 'recordReports'>,
    /** Told what each durable batch did, in order (events, metrics). */
    private readonly onRecorded: (writes: readonly ReportWrite[], results: ReportResult[]) => void,
  ) {}

  /** Records one report; resolves once it is durable. Rejects when the store write fails. */
  submit(write: ReportWrite): Promise<ReportResult> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ write, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        // one macrotask: the reports already read from the sockets join this batch
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0, MAX_BATCH);
        const writes = batch.map((p) => p.write);
        let results: ReportResult[];
        try {
          results = await this.store.recordReports(writes);
        } catch (err) {
          for (const p of batch) p.reject(err as Error);
          continue;
        }
        try {
          this.onRecorded(writes, results);
        } finally {
          batch.forEach((p, i) => p.resolve(results[i] as ReportResult));
        }
      }
    } finally {
      this.#flushing = false;
    }
  }
}
