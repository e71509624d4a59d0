/**
 * The watcher's detection loop (SPEC §15), one per leader term: it runs only while its
 * scheduler leads, and writes through that scheduler's ledger, so every `missed` row, every
 * `crashed` end and every checkpoint is fenced by the term's epoch (§10) and retried like the
 * scheduler's own writes. A `missed` row is an insert-if-absent on its instant's fire claim: a
 * report that claimed the instant first wins, and two leaders never both record it. The
 * decisions are `detect.ts`'s; the time is the injected clock's.
 */
import type { Clock } from '../../fire/types.js';
import type { DaemonEmitter } from '../events.js';
import type { RegisteredJob } from '../registry.js';
import type { LedgerOp, LedgerResult, RunRecord, Store } from '../store/types.js';
import { NO_END_REPORT } from '../store/host-types.js';
import { detect, missedRow, type Cursor, type DueInstant } from './detect.js';

/** Longest sleep between two looks (open runs started elsewhere, reloads). */
export const MAX_SLEEP_MS = 5000;

/** The writes of a term: its scheduler's ledger. */
export interface TermLedger {
  submit(ops: readonly LedgerOp[], urgent?: boolean): Promise<LedgerResult[]>;
}

/** What a {@link Detector} needs. */
export interface DetectorDeps {
  store: Pick<Store, 'openHostRuns' | 'checkpoints'>;
  ledger: TermLedger;
  clock: Clock;
  events: DaemonEmitter;
  /** The watched jobs now (reloads apply at the next turn). */
  jobs(): ReadonlyMap<string, RegisteredJob>;
}

const cursorKey = (job: RegisteredJob, index: number): string => `${job.key}#${index}`;

/** See the module comment. */
export class Detector {
  readonly #through = new Map<string, number>();
  readonly #stop = new AbortController();
  #wake = new AbortController();
  #since = 0;
  #loop: Promise<void> = Promise.resolve();

  constructor(private readonly deps: DetectorDeps) {}

  /** Reads the checkpoints and starts the loop: detection starts at each watch's start. */
  async start(): Promise<void> {
    this.#since = this.deps.clock.now();
    for (const c of await this.deps.store.checkpoints())
      this.#through.set(`${c.app}/${c.job}#${c.scheduleIndex}`, c.at);
    this.#loop = this.#run();
  }

  /** Looks again now (a report opened a run, the watched jobs changed). */
  poke(): void {
    this.#wake.abort();
  }

  /** Stops the loop and waits for the turn in progress. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      let nextAt: number | null = null;
      try {
        nextAt = await this.turn();
      } catch (err) {
        this.deps.events.emit('warning', {
          msg: 'host-mode detection failed; trying again',
          err: (err as Error).message,
        });
      }
      if (this.#stop.signal.aborted) break;
      const now = this.deps.clock.now();
      const wait = Math.min(MAX_SLEEP_MS, nextAt === null ? MAX_SLEEP_MS : nextAt - now);
      if (this.#wake.signal.aborted) this.#wake = new AbortController();
      if (wait > 0) await this.deps.clock.sleep(wait, this.#wake.signal);
    }
  }

  /** One look: records what is overdue; returns when to look again. Exposed for tests. */
  async turn(): Promise<number | null> {
    const now = this.deps.clock.now();
    const jobs = this.deps.jobs();
    const first: LedgerOp[] = [];
    const cursors: Cursor[] = [];
    for (const job of jobs.values()) {
      for (let index = 0; index < job.schedules.length; index++) {
        const key = cursorKey(job, index);
        let through = this.#through.get(key);
        if (through === undefined) {
          // a watch seen for the first time: detection starts now
          through = now;
          this.#through.set(key, now);
          first.push(checkpoint(job, index, now));
        }
        cursors.push({ job, index, through });
      }
    }
    if (first.length > 0) await this.deps.ledger.submit(first, false);
    const open = await this.deps.store.openHostRuns();
    const d = detect({
      now,
      since: this.#since,
      cursors,
      open,
      jobOf: (key) => jobs.get(key),
    });
    const ops: LedgerOp[] = [];
    for (const due of d.due) ops.push({ kind: 'insert', run: missedRow(due, now) });
    for (const { run } of d.crashed)
      ops.push({
        kind: 'end',
        id: run.id,
        patch: { outcome: 'crashed', endedAt: now, error: NO_END_REPORT },
      });
    for (const a of d.advanced) ops.push(checkpoint(a.cursor.job, a.cursor.index, a.through));
    if (ops.length === 0) return d.nextAt;
    const results = await this.deps.ledger.submit(ops);
    if (results.some((r) => r.kind === 'fenced')) return null; // the term is over
    for (const a of d.advanced)
      this.#through.set(cursorKey(a.cursor.job, a.cursor.index), a.through);
    this.#announce(d.due, results);
    return d.nextAt;
  }

  #announce(due: readonly DueInstant[], results: readonly LedgerResult[]): void {
    const { events } = this.deps;
    due.forEach((d, i) => {
      events.emit('expected', { key: d.job.key, at: d.at });
      const r = results[i];
      if (r?.kind === 'recorded') {
        events.emit('run-recorded', r.run);
        events.emit('run-ended', r.run);
      }
    });
    for (const r of results.slice(due.length)) {
      if (r.kind === 'ended') events.emit('run-ended', r.run as RunRecord);
    }
  }
}

function checkpoint(job: RegisteredJob, index: number, at: number): LedgerOp {
  return { kind: 'checkpoint', ref: { app: job.app, job: job.job.name, scheduleIndex: index }, at };
}
