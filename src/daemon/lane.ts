/**
 * One job's admission authority (SPEC §9 item 3): its slots (runs started or
 * about to start), its FIFO queue and its paused state. Every path that wants
 * a run to start — schedule, catch-up, manual, delayed, queued, Replace,
 * replay — asks the lane, and every path that ends or stops one tells it.
 *
 * Every method is synchronous: the check ("is there room?") and the take
 * (reserving the slot, queueing, marking a Replace victim) happen with no
 * `await` between them, so interleavings cannot overbook a job. Slots are
 * reserved before the run's ledger row is durable and released only after its
 * end is durable (release after record).
 */
import { admit, pickVictim, type OverlapPolicy } from './policy.js';
import type { RegisteredJob } from './registry.js';
import type { NewRun } from './store/types.js';

/** A run holding a slot of its job. */
export interface Slot {
  readonly run: NewRun;
  /** Admission order within the lane: Replace stops the lowest. */
  readonly order: number;
  /** Aborts the run's attempts (Replace, cancel, shutdown). */
  readonly controller: AbortController;
  /** Set once the run is being stopped; its end records this reason. */
  stopReason: string | null;
  /** Replace: the slot that must have ended before this run sends anything. */
  readonly waitFor: Slot | null;
  /** True from the moment its `running` row is durable until the slot is released. */
  running: boolean;
  /** Resolves when the slot is released. */
  readonly done: Promise<void>;
}

/** What the lane decided for a new run. */
export type Decision =
  | { kind: 'start'; slot: Slot }
  | { kind: 'replace'; slot: Slot; victim: Slot | null }
  | { kind: 'queue' }
  | { kind: 'skip'; reason: string }
  | { kind: 'queue_full'; reason: string };

interface SlotInternal extends Slot {
  release(): void;
}

/** The lane of one job. */
export class Lane {
  private readonly slots = new Map<string, SlotInternal>();
  private readonly queue: NewRun[] = [];
  private order = 0;
  /** The job is no longer in the manifests; its lane lives until its last slot ends. */
  removed = false;

  constructor(
    public job: RegisteredJob,
    /** Scheduled fires of a paused job are not recorded; manual triggers still run. */
    public paused = false,
  ) {}

  get key(): string {
    return this.job.key;
  }

  private get policy(): OverlapPolicy {
    return this.job.overlap;
  }

  /** Runs holding a slot: reserved, running, or being stopped. */
  get active(): number {
    return this.slots.size;
  }

  /** Runs started (their `running` row is durable) and not yet released: at most max_concurrent. */
  get running(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.running) n += 1;
    return n;
  }

  /** Queued runs waiting for a slot. */
  get queued(): number {
    return this.queue.length;
  }

  /** Snapshot of the queue, FIFO. */
  queuedRuns(): readonly NewRun[] {
    return [...this.queue];
  }

  /** The slot of a run, if it holds one. */
  slot(id: string): Slot | undefined {
    return this.slots.get(id);
  }

  /** Every slot, oldest first. */
  allSlots(): Slot[] {
    return [...this.slots.values()].sort((a, b) => a.order - b.order);
  }

  /** Decides for a new run and takes what the decision needs, at once. */
  admit(run: NewRun): Decision {
    const { concurrency, maxConcurrent, queueMax } = this.policy;
    switch (admit(this.policy, this.slots.size, this.queue.length)) {
      case 'start':
        return { kind: 'start', slot: this.reserve(run, null) };
      case 'replace': {
        const views = [...this.slots.values()].map((s) => ({
          id: s.run.id,
          order: s.order,
          stopping: s.stopReason !== null,
        }));
        const pick = pickVictim(views);
        const victim = pick.stop === null ? null : (this.slots.get(pick.stop) ?? null);
        if (victim) this.stopSlot(victim, `replaced by run ${run.id}`);
        const waitFor = pick.waitFor === null ? null : (this.slots.get(pick.waitFor) ?? null);
        return { kind: 'replace', slot: this.reserve(run, waitFor), victim };
      }
      case 'queue':
        this.queue.push(run);
        return { kind: 'queue' };
      case 'skip':
        return {
          kind: 'skip',
          reason: `${maxConcurrent} run(s) already active (${concurrency}, max_concurrent ${maxConcurrent})`,
        };
      case 'queue_full':
        return { kind: 'queue_full', reason: `queue full (queue_max ${queueMax})` };
    }
  }

  /** Puts a run recovered from the ledger back at the end of the queue (start-up). */
  requeue(run: NewRun): void {
    this.queue.push(run);
  }

  /** Takes the head of the queue into a slot when there is room; else null. */
  takeNext(): Slot | null {
    if (this.removed || this.queue.length === 0) return null;
    if (this.policy.concurrency !== 'Allow' && this.slots.size >= this.policy.maxConcurrent)
      return null;
    const run = this.queue.shift() as NewRun;
    return this.reserve(run, null);
  }

  /** Removes a queued run (cancel); true when it was queued. */
  unqueue(id: string): boolean {
    const i = this.queue.findIndex((r) => r.id === id);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    return true;
  }

  /** Empties the queue (job removed, or recorded elsewhere); returns what it held. */
  clearQueue(): NewRun[] {
    return this.queue.splice(0, this.queue.length);
  }

  /** Stops a run holding a slot (cancel, shutdown); false when it holds none or is already stopping. */
  stop(id: string, reason: string): boolean {
    const slot = this.slots.get(id);
    if (!slot || slot.stopReason !== null) return false;
    this.stopSlot(slot, reason);
    return true;
  }

  /** Releases a slot once its run's end is durable. */
  release(id: string): void {
    const slot = this.slots.get(id);
    if (!slot) return;
    this.slots.delete(id);
    slot.release();
  }

  private stopSlot(slot: Slot, reason: string): void {
    slot.stopReason = reason;
    slot.controller.abort();
  }

  private reserve(run: NewRun, waitFor: Slot | null): Slot {
    let release!: () => void;
    const done = new Promise<void>((r) => (release = r));
    const controller = new AbortController();
    // node builds a controller's signal on first read: read it now, at admission (ahead of a
    // planned fire's instant), not when the run's request is about to leave
    void controller.signal;
    const slot: SlotInternal = {
      run,
      order: this.order++,
      controller,
      stopReason: null,
      waitFor,
      running: false,
      done,
      release,
    };
    this.slots.set(run.id, slot);
    return slot;
  }
}
