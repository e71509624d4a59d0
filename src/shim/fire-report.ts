/**
 * The reports of one fire (SPEC §15), loaded only when the shim has a report URL: `started`
 * once the fire holds its lock (at its first attempt), `ended` with the outcome, the shim's exit
 * code, the attempts and their log, the error, the duration and, for a command job, the last
 * 64 KiB of its captured (already redacted) output. A fire that never got to an attempt —
 * contended (`skipped`), a duplicate, an internal error — sends only its `ended` report.
 *
 * `started` goes out while the attempt runs (the fire never waits for it); `ended` follows it,
 * and {@link FireReports.finish} waits for both, each within its own 2 s budget.
 */
import type { FireOutcome } from '../contract/run.js';
import {
  MAX_REPORT_OUTPUT_BYTES,
  type ReportedAttempt,
  type ReportedOutcome,
  type ReportedRun,
} from '../contract/report.js';
import type { FireEvent, FireResult } from '../fire/engine.js';
import type { OutputWriter } from '../fire/output.js';
import type { OutputStream } from '../fire/types.js';
import { ShimReporter, type ReporterOptions } from './reporter.js';

/** What is known of a fire before it runs. */
export interface FireFacts {
  runId: string;
  runKey: string;
  app: string;
  job: string;
  scheduleIndex: number | null;
  /** The nominal fire time (the run key's), epoch ms. */
  scheduledTime: number;
  host: string;
  /** When the shim started, epoch ms. */
  startedAt: number;
}

/** How the fire ended. */
export interface FireEnding {
  outcome: FireOutcome;
  exitCode: number;
  result: FireResult | undefined;
  error: string | null;
}

const MAX_ERROR = 4096;

/** §7 outcome names of the shim's outcomes; a lock backend out of reach is an internal error. */
export function reportedOutcome(outcome: FireOutcome): ReportedOutcome {
  switch (outcome) {
    case 'lock-contended':
      return 'skipped';
    case 'lock-unavailable':
      return 'internal_error';
    default:
      return outcome.replace(/-/g, '_') as ReportedOutcome;
  }
}

/** Keeps the last {@link MAX_REPORT_OUTPUT_BYTES} of a command's output, passing all of it on. */
export class OutputTail implements OutputWriter {
  private chunks: Buffer[] = [];
  private held = 0;
  private seen = 0;
  private cut = false;

  constructor(
    private readonly inner: OutputWriter,
    private readonly max = MAX_REPORT_OUTPUT_BYTES,
  ) {}

  data(stream: OutputStream, chunk: Buffer): void {
    this.inner.data(stream, chunk);
    this.chunks.push(Buffer.from(chunk));
    this.held += chunk.length;
    this.seen += chunk.length;
    if (this.held > 2 * this.max) this.compact();
  }

  attempt(n: number): void {
    this.inner.attempt?.(n);
  }

  attemptEnded(n: number): void {
    this.inner.attemptEnded?.(n);
  }

  truncated(maxBytes: number): void {
    this.cut = true;
    this.inner.truncated?.(maxBytes);
  }

  /** The tail as text (starting on a character boundary) and whether anything was left out. */
  result(): { output: string; truncated: boolean } {
    this.compact();
    const buf = Buffer.concat(this.chunks);
    let start = 0;
    while (start < buf.length && ((buf[start] as number) & 0xc0) === 0x80) start++;
    return {
      output: buf.subarray(start).toString('utf8'),
      truncated: this.cut || this.seen > this.max,
    };
  }

  private compact(): void {
    const all = Buffer.concat(this.chunks);
    const tail = all.subarray(Math.max(0, all.length - this.max));
    this.chunks = [Buffer.from(tail)];
    this.held = tail.length;
  }
}

/** The reports of one fire. */
export class FireReports {
  private readonly reporter: ShimReporter;
  private readonly attempts: ReportedAttempt[] = [];
  private open: ReportedAttempt | undefined;
  private runningSince: number | undefined;
  private fencingToken: string | null = null;
  private outputTail: OutputTail | undefined;

  constructor(
    private readonly facts: FireFacts,
    options: ReporterOptions,
    private readonly command: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.reporter = new ShimReporter(options);
  }

  /** Wraps a command job's output writer to keep its tail. */
  tail(inner: OutputWriter): OutputWriter {
    this.outputTail = new OutputTail(inner);
    return this.outputTail;
  }

  /** Follows the engine's events: the attempt log, and `started` at the first attempt. */
  onEvent(e: FireEvent): void {
    const at = this.now();
    if (e.event === 'attempt' && e.attempt !== undefined) {
      this.close(at, {});
      if (e.fencingToken !== undefined) this.fencingToken = String(e.fencingToken);
      this.open = {
        attempt: e.attempt,
        startedAt: at,
        durationMs: 0,
        status: null,
        exitCode: null,
        error: null,
      };
      if (this.runningSince === undefined) {
        this.runningSince = at;
        this.reporter.send({ kind: 'started', run: this.run(null, null), spoolDropped: 0 });
      }
      return;
    }
    if (this.open === undefined || e.attempt !== this.open.attempt) return;
    if (e.event === 'retries-exhausted' || e.event === 'record-failed') return;
    this.close(at, e);
  }

  /** Sends `ended` and waits for this fire's reports (bounded). Never rejects. */
  async finish(ending: FireEnding): Promise<void> {
    const at = this.now();
    this.close(at, { err: ending.error ?? undefined });
    this.reporter.send({ kind: 'ended', run: this.run(ending, at), spoolDropped: 0 });
    await this.reporter.settle();
  }

  private close(at: number, e: Partial<FireEvent>): void {
    const a = this.open;
    if (a === undefined) return;
    this.open = undefined;
    a.durationMs = Math.max(0, e.durationMs ?? at - a.startedAt);
    if (e.status !== undefined) {
      if (this.command) a.exitCode = e.status;
      else a.status = e.status;
    }
    if (e.err !== undefined) a.error = e.err.slice(0, MAX_ERROR);
    this.attempts.push(a);
  }

  private run(ending: FireEnding | null, endedAt: number | null): ReportedRun {
    const f = this.facts;
    const startedAt = this.runningSince ?? f.startedAt;
    const last = this.attempts[this.attempts.length - 1];
    const outcome = ending === null ? null : reportedOutcome(ending.outcome);
    let error: string | null = null;
    if (ending !== null && outcome !== 'success' && outcome !== 'duplicate') {
      const status = ending.result?.lastStatus;
      error =
        ending.error ??
        last?.error ??
        (status !== undefined && status !== null ? `HTTP ${status}` : null);
    }
    const tail = ending !== null && this.outputTail !== undefined ? this.outputTail.result() : null;
    return {
      id: f.runId,
      runKey: f.runKey,
      app: f.app,
      job: f.job,
      scheduleIndex: f.scheduleIndex,
      scheduledTime: f.scheduledTime,
      host: f.host,
      startedAt,
      fencingToken: this.fencingToken,
      endedAt,
      outcome,
      exitCode: ending?.exitCode ?? null,
      attempts: ending?.result?.attempts ?? this.attempts.length,
      lastStatus: this.command ? null : (ending?.result?.lastStatus ?? null),
      error: error === null ? null : error.slice(0, MAX_ERROR),
      durationMs: endedAt === null ? null : Math.max(0, endedAt - startedAt),
      attemptLog: ending === null ? [] : [...this.attempts],
      output: tail?.output ?? null,
      outputTruncated: tail?.truncated ?? false,
    };
  }
}
