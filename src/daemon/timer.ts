/**
 * The daemon's one timer (SPEC §7): a min-heap of every schedule's next fire
 * and every delayed run, and one sleep on the earliest, never one timer per
 * job. A sleep is capped at {@link MAX_SLEEP_MS} (croner's habit), so a clock
 * jump is noticed within it; a wake-up more than a second off its deadline is
 * reported as `timer-drift`. What is due is handed to `onDue` in one batch;
 * deciding what a late item means (SPEC §9 item 5) is the caller's business.
 */
import type { Clock } from '../fire/types.js';
import type { DaemonEmitter } from './events.js';
import { MinHeap } from './heap.js';

/** Longest single sleep of the loop: clock jumps are noticed within it. */
export const MAX_SLEEP_MS = 30_000;

/** Something the timer wakes up for. */
export type TimerItem =
  | {
      at: number;
      kind: 'fire';
      key: string;
      index: number;
      /** Nominal fire time (`at` minus jitter). */
      nominal: number;
      /** Registry generation: items of a replaced registry are ignored. */
      generation: number;
      /** Decided at its time, not planned ahead (its lane was busy when planning looked at it). */
      noPlan?: boolean;
    }
  | { at: number; kind: 'delayed'; runId: string; key: string }
  /** A run planned ahead whose requests may leave now (never before `at`). */
  | { at: number; kind: 'launch'; runId: string; key: string }
  /** The earliest `until` of the freezes (SPEC §16): those it reaches end by themselves. */
  | { at: number; kind: 'thaw' };

/** A fire item the loop may hand to `onPlan` ahead of its time. */
const plannable = (item: TimerItem | undefined): item is Extract<TimerItem, { kind: 'fire' }> =>
  item?.kind === 'fire' && item.noPlan !== true;

/** Callbacks of {@link TimerLoop}. */
export interface TimerHandlers {
  /** Everything due at `now`, earliest first. The loop waits for it before sleeping again. */
  onDue(now: number, items: TimerItem[]): Promise<void>;
  /** Called at each turn of the loop before sleeping (housekeeping such as retention). */
  onTurn?(now: number): Promise<void>;
  /**
   * Fires due within `lookaheadMs`, handed over before their time so their
   * rows can be recorded ahead and their requests leave at the instant.
   */
  onPlan?(now: number, items: Extract<TimerItem, { kind: 'fire' }>[]): Promise<void>;
  lookaheadMs?: number;
}

/** The loop. `start()`, `push()` items, `stop()`. */
export class TimerLoop {
  private readonly heap = new MinHeap<TimerItem>();
  private wake = new AbortController();
  private stopping = false;
  private loop: Promise<void> | undefined;
  /** True while a turn is under way (not waiting on the clock, not stopped). */
  private turning = false;
  private resting: (() => void)[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly events: DaemonEmitter,
    private readonly handlers: TimerHandlers,
  ) {}

  /** Adds an item; wakes the loop if it is earlier than the current sleep. */
  push(item: TimerItem): void {
    const first = this.heap.peek();
    this.heap.push(item);
    if (this.loop && (!first || item.at < first.at)) this.wake.abort();
  }

  /** Removes every item for which `drop` is true. */
  removeWhere(drop: (item: TimerItem) => boolean): void {
    this.heap.removeWhere(drop);
  }

  /** The earliest item, if any. */
  peek(): TimerItem | undefined {
    return this.heap.peek();
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops the loop; resolves when the current turn is over. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    await this.loop;
  }

  /**
   * Resolves once the loop waits on the clock (or has stopped): no turn is under way. A test
   * that moves a fake clock waits for this between wake-ups, so a turn that does I/O (a
   * PostgreSQL write, a prune) ends at the time it began instead of the clock running past it.
   */
  whenAsleep(): Promise<void> {
    if (!this.turning) return Promise.resolve();
    return new Promise((resolve) => this.resting.push(resolve));
  }

  private rest(): void {
    this.turning = false;
    for (const resolve of this.resting.splice(0)) resolve();
  }

  /** The loop's only wait on the clock: no turn is under way while it lasts. */
  private async nap(ms: number, signal?: AbortSignal): Promise<boolean> {
    this.rest();
    try {
      return await this.clock.sleep(ms, signal);
    } finally {
      this.turning = true;
    }
  }

  private async run(): Promise<void> {
    try {
      await this.turns();
    } finally {
      this.rest();
    }
  }

  private async turns(): Promise<void> {
    const { clock } = this;
    this.turning = true;
    while (!this.stopping) {
      await this.handlers.onTurn?.(clock.now());
      // read after the housekeeping: a sleep measured from before it (an hourly prune of a
      // large ledger can take seconds) would wake that much past its deadline
      const now = clock.now();
      const next = this.heap.peek();
      const ahead = this.handlers.onPlan ? (this.handlers.lookaheadMs ?? 0) : 0;
      if (ahead > 0 && plannable(next) && next.at - now <= ahead && next.at > now) {
        const items: Extract<TimerItem, { kind: 'fire' }>[] = [];
        for (
          let top = this.heap.peek();
          plannable(top) && top.at <= now + ahead;
          top = this.heap.peek()
        )
          items.push(this.heap.pop() as Extract<TimerItem, { kind: 'fire' }>);
        try {
          await this.handlers.onPlan?.(now, items);
        } catch (err) {
          this.events.emit('warning', { msg: 'planning failed', err: (err as Error).message });
        }
        continue;
      }
      const wait = next ? next.at - (plannable(next) ? ahead : 0) - now : MAX_SLEEP_MS;
      if (wait > 0) {
        this.wake = new AbortController();
        const sleep = Math.min(wait, MAX_SLEEP_MS);
        const completed = await this.nap(sleep, this.wake.signal);
        const woke = clock.now();
        if (completed && Math.abs(woke - (now + sleep)) > 1000)
          this.events.emit('timer-drift', { expected: now + sleep, actual: woke });
        continue;
      }
      const due: TimerItem[] = [];
      while ((this.heap.peek()?.at ?? Infinity) <= now) due.push(this.heap.pop() as TimerItem);
      try {
        await this.handlers.onDue(now, due);
      } catch (err) {
        this.events.emit('warning', {
          msg: 'scheduler turn failed',
          err: (err as Error).message,
        });
        await this.nap(1000);
      }
    }
  }
}
