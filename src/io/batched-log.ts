/**
 * The daemon's JSON log destination: pino's asynchronous `pino.destination` (sonic-boom), fed
 * one string per event-loop turn instead of one per line.
 *
 * Why: sonic-boom appends each line to its last buffered chunk and measures that chunk with
 * `Buffer.byteLength` on every write, which flattens the growing string each time — for a
 * burst of 10,000 runs (two lines each) that was ~150 MB of short-lived strings, the largest
 * allocator of the whole burst in a sampling heap profile (BENCHMARKS.md notes). The lines of
 * one turn are joined once here and handed over as one write; the order is kept, and
 * {@link BatchedLog.flushSync} hands over what is pending before sonic-boom's own sync flush.
 */

/** What is batched into: a sonic-boom, or anything with the same two methods. */
export interface LineSink {
  write(chunk: string): boolean;
  flushSync(): void;
}

/** See the module comment. */
export class BatchedLog implements LineSink {
  #lines: string[] = [];
  #scheduled = false;

  constructor(private readonly sink: LineSink) {
    // a process that exits in the same turn as it logged (process.exit, a fatal error) still
    // writes those lines
    process.once('exit', () => {
      try {
        this.flushSync();
      } catch {
        // the sink is closed already: nothing more can be written
      }
    });
  }

  write(chunk: string): boolean {
    this.#lines.push(chunk);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#handOver());
    }
    return true;
  }

  /** Writes what is pending and what the sink holds, synchronously (at exit). */
  flushSync(): void {
    this.#handOver();
    this.sink.flushSync();
  }

  #handOver(): void {
    this.#scheduled = false;
    if (this.#lines.length === 0) return;
    const text = this.#lines.length === 1 ? this.#lines[0]! : this.#lines.join('');
    this.#lines = [];
    this.sink.write(text);
  }
}
