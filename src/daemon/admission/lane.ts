/**
 * One job's admission, as a state machine (SPEC §9 items 3 and 4): its slots
 * (runs that hold one of the job's places), its FIFO queue and its paused
 * state. Every path that wants a run to start — schedule, plan-ahead,
 * catch-up, manual, delayed, queued, Replace, replay — asks the lane, and every
 * answer of the ledger and every end comes back to it. The lane decides and
 * answers with values: a {@link Ticket} (the row to record) and
 * {@link Effect}s (what to do next). It does no I/O, reads no clock, sets no
 * timer and holds no promise; the pipeline (`pipeline.ts`) carries the effects
 * out and feeds the ledger's results back. So the admission invariants can be
 * proven by a property test in milliseconds (`test/daemon/admission-machine.test.ts`).
 *
 * The invariants it owns:
 * - **Room.** A slot is taken and checked with no step between (every method
 *   is synchronous); the runs sending requests never exceed `max_concurrent`
 *   (Allow excepted): a Replace newcomer waits for the slot it replaces.
 * - **Once per run key.** A run is launched only on the ledger's word that its
 *   run key is claimed (an insert recorded `planned`, or a `start` answered
 *   `started`); the claim itself is the store's (insert-if-absent).
 * - **Release after record.** A slot is released only when the run's end is
 *   durable ({@link Lane.released}); what waits for it moves then.
 * - **Replace never stops a run twice**, and a stopped run that never started
 *   ends `stopped` without sending anything.
 * - **Frozen admits nothing** (SPEC §16): while a freeze covers the job, a new run of any
 *   kind is recorded `skipped` with the freeze's reason, nothing is planned ahead, a backfill's
 *   offer is declined and the queue does not move; runs already launched finish.
 * - **The calendar holds the schedule's fires** (SPEC §16 "Calendars", `calendar.ts`): a
 *   scheduled or catch-up fire at an instant an operator skipped, or inside a blackout window,
 *   is recorded `skipped` with the reason (`skip: by <who>`, `blackout: <window>`) and never
 *   planned ahead; the skip is consumed in the row's ledger group. Manual triggers, replays and
 *   backfills are not held.
 */
import { admit, hasRoom, pickVictim, type OverlapPolicy } from '../policy.js';
import type { RegisteredJob } from '../registry.js';
import type { FreezeRecord, PauseNote } from '../store/freeze-types.js';
import { skipReason, type SkipRecord } from '../store/skip-types.js';
import { Calendar, type Hold } from './calendar.js';
import type { LedgerResult, NewRun } from '../store/types.js';
import {
  ended,
  endSlot,
  existing,
  frozenReason,
  handOn,
  launch,
  pausedReason,
  planned,
  removedEnd,
  replacedBy,
  stopAhead,
  stopEffects,
  ticket,
  victimOf,
  wake,
} from './steps.js';
import type { CancelResult, DecisionKind, Effect, Slot, Ticket } from './types.js';

export type {
  CancelResult,
  DecisionKind,
  Effect,
  Slot,
  SlotState,
  Ticket,
  UnstartedOutcome,
} from './types.js';
export { frozenReason, recordedAsIs } from './steps.js';

/** The lane of one job. */
export class Lane {
  private readonly slots = new Map<string, Slot>();
  private readonly queue: NewRun[] = [];
  private order = 0;
  /** The job is no longer in the manifests; its lane lives until its last slot ends. */
  removed = false;
  /** The freeze covering the job (SPEC §16), or null; set by {@link freeze} and {@link thaw}. */
  frozen: FreezeRecord | null = null;
  /** A paused job's note (why, who, since when), when it was given one. */
  pauseNote: PauseNote | null = null;
  /** Skipped instants and the blackout check (SPEC §16 "Calendars"). */
  readonly calendar = new Calendar();

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

  // ---- views ----

  /** Runs holding a slot, whatever their state. */
  get active(): number {
    return this.slots.size;
  }

  /** Launched runs whose slot is not yet released: at most max_concurrent (Allow excepted). */
  get running(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.state === 'running') n += 1;
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

  /** Whether scheduled fires of this job are recorded at all (paused and disabled jobs skip them). */
  get takesScheduled(): boolean {
    return this.job.enabled && !this.paused;
  }

  // ---- decisions ----

  /**
   * Decides for a new run at `now` and takes what the decision needs at once. A Replace marks
   * its victim stopping now and stops it once the newcomer's row is durable ({@link recorded}).
   */
  admit(run: NewRun, now: number): Ticket {
    const { concurrency, maxConcurrent, queueMax } = this.policy;
    if (this.frozen) return ticket(ended(run, now, 'skipped', frozenReason(this.frozen)), 'skip');
    const held = this.hold(run, true);
    if (held)
      return { ...ticket(ended(run, now, 'skipped', held.reason), 'skip'), skip: held.skip };
    switch (admit(this.policy, this.slots.size, this.queue.length)) {
      case 'start':
        this.reserve(run, null, false);
        return ticket(planned(run, now), 'start');
      case 'replace': {
        const pick = pickVictim(
          [...this.slots.values()].map((s) => ({
            id: s.run.id,
            order: s.order,
            stopping: s.stopReason !== null,
          })),
        );
        const victim = pick.stop === null ? undefined : this.slots.get(pick.stop);
        if (victim) victim.stopReason = replacedBy(run.id);
        this.reserve(run, pick.waitFor, false);
        return ticket(run, 'replace', false, victim ? victim.run.id : null);
      }
      case 'queue':
        this.queue.push(run);
        return ticket(run, 'queue');
      case 'skip':
        return ticket(
          ended(
            run,
            now,
            'skipped',
            `${maxConcurrent} run(s) already active (${concurrency}, max_concurrent ${maxConcurrent})`,
          ),
          'skip',
        );
      case 'queue_full':
        return ticket(
          ended(run, now, 'queue_full', `queue full (queue_max ${queueMax})`),
          'queue_full',
        );
    }
  }

  /**
   * Plan-ahead: a scheduled fire due at `at` is decided now only when the lane is idle (no slot,
   * no queue) and takes scheduled fires; its row is recorded `planned` with its start at `at`,
   * and it is launched by {@link due}. Null: decide it at its instant.
   */
  plan(run: NewRun, at: number, now: number): Ticket | null {
    if (
      !this.takesScheduled ||
      this.frozen ||
      this.slots.size > 0 ||
      this.queue.length > 0 ||
      at <= now ||
      this.hold(run, false) !== null
    )
      return null;
    this.reserve(run, null, true);
    return ticket(planned(run, at), 'start', true);
  }

  /**
   * Backfill admission (SPEC §16): a backfill's run is decided only when the lane has room now
   * and nothing waits in its queue — it starts; otherwise null, and the backfill offers it again
   * once a slot is released. So a backfill never skips, queues or replaces, never overtakes the
   * queue, and its runs count against `max_concurrent` like any other.
   */
  offer(run: NewRun, now: number): Ticket | null {
    if (
      this.removed ||
      this.frozen ||
      this.queue.length > 0 ||
      !hasRoom(this.policy, this.slots.size)
    )
      return null;
    this.reserve(run, null, false);
    return ticket(planned(run, now), 'start');
  }

  /** The ledger's answer to a ticket's insert. */
  recorded(t: Ticket, result: LedgerResult): Effect[] {
    const id = t.row.id;
    const slot = this.slots.get(id);
    const victim = victimOf(this.slots, id);
    if (result.kind !== 'recorded') {
      // the instant already has a row (a second scheduler, a clock gone back): undo
      const effects: Effect[] = slot ? this.undo(slot, victim) : [];
      if (!slot && t.decision === 'queue') this.unqueue(id);
      effects.push({
        kind: 'note',
        msg: `${this.key}: the fire of ${new Date(t.row.scheduledTime).toISOString()} is already in the ledger; not fired again`,
      });
      return effects;
    }
    const effects: Effect[] = victim ? stopEffects(victim) : [];
    const run = result.run;
    if (run.phase === 'ended') {
      // recorded ended (skipped, queue full), or its run key was held (a duplicate)
      if (slot) effects.push(...this.release(id));
      effects.push({ kind: 'ended', run });
      return effects;
    }
    // queued (a queued run the queue already moved into a slot has its own `start` under way:
    // this answer must not claim it a second time); or withdrawn meanwhile
    if (!slot || slot.state !== 'claiming' || t.decision === 'queue') return effects;
    slot.record = run;
    if (run.phase === 'queued') {
      slot.state = 'waiting'; // a Replace newcomer
      if (!this.slots.has(slot.waitFor ?? '')) effects.push(...wake(slot));
      return effects;
    }
    // planned: its run key is claimed
    if (slot.stopReason !== null) effects.push(endSlot(slot));
    else if (slot.ahead && !slot.due) slot.state = 'claimed';
    else effects.push(launch(slot, run));
    return effects;
  }

  /** A planned run's instant has come: launched now, or once its row is durable. */
  due(id: string): Effect[] {
    const slot = this.slots.get(id);
    if (!slot) return [];
    if (slot.state === 'claiming') {
      slot.due = true;
      return [];
    }
    if (slot.state !== 'claimed' || slot.record === null) return [];
    return [launch(slot, slot.record)];
  }

  /** A run that already has a queued row: a delayed run now due, or one recovered at start-up. */
  admitExisting(run: NewRun, now: number): { decision: DecisionKind; effects: Effect[] } {
    const t = this.admit(run, now);
    return { decision: t.decision, effects: existing(this.slots, t, run) };
  }

  /** The ledger's answer to a `start`: `started` launches, `duplicate` ends, `gone` frees the slot. */
  started(id: string, result: LedgerResult): Effect[] {
    const slot = this.slots.get(id);
    if (!slot) return [];
    if (result.kind === 'started') {
      slot.record = result.run;
      return [slot.stopReason !== null ? endSlot(slot) : launch(slot, result.run)];
    }
    const effects = this.release(id);
    if (result.kind === 'duplicate') effects.push({ kind: 'ended', run: result.run });
    return effects;
  }

  /**
   * A run's end is durable: its slot is released; a Replace newcomer waiting for it and the
   * head of the queue move (release after record).
   */
  released(id: string): Effect[] {
    return this.release(id);
  }

  /** Puts a run recovered from the ledger back at the end of the queue (start-up). */
  requeue(run: NewRun): void {
    this.queue.push(run);
  }

  /** Cancels a queued run, or stops one holding a slot. */
  cancel(id: string, reason: string): CancelResult {
    const queued = this.unqueue(id);
    if (queued) return { found: 'queued', run: queued };
    const slot = this.slots.get(id);
    if (!slot) return { found: 'none' };
    if (slot.stopReason !== null) return { found: 'slot', effects: [] }; // never stopped twice
    slot.stopReason = reason;
    return { found: 'slot', effects: stopEffects(slot) };
  }

  /** Stops every slot (shutdown after the grace period). */
  stopAll(reason: string): Effect[] {
    const effects: Effect[] = [];
    for (const slot of this.allSlots()) {
      if (slot.stopReason !== null) continue;
      slot.stopReason = reason;
      effects.push(...stopEffects(slot));
    }
    return effects;
  }

  /**
   * Runs planned ahead that were not launched, taken back (shutdown): their slots are dropped
   * and their rows are to be withdrawn (a withdrawal written after their insert undoes it).
   */
  withdrawPlanned(): string[] {
    const ids: string[] = [];
    for (const [id, slot] of this.slots)
      if (slot.ahead && (slot.state === 'claiming' || slot.state === 'claimed')) {
        ids.push(id);
        this.slots.delete(id);
      }
    return ids;
  }

  /**
   * A freeze now covers the job: nothing new is admitted from here on. Runs planned ahead that
   * have not been launched end `stopped` with the freeze's reason; launched runs finish; the
   * queue stays as it is until {@link thaw}.
   */
  freeze(note: FreezeRecord): Effect[] {
    this.frozen = note;
    return stopAhead(this.allSlots(), frozenReason(note)).effects;
  }

  /**
   * Why a scheduled or catch-up fire of `run` is not run (a skipped instant, a blackout window),
   * or null; `consume` takes the skip (the fire is being decided).
   */
  hold(run: NewRun, consume: boolean): Hold | null {
    return this.calendar.hold(run, this.job.blackout, consume);
  }

  /**
   * An operator skips instant `skip.at` (`cronix skip`). A fire of it already planned ahead and
   * not launched ends `skipped` with the skip's reason (`planned`: the skip is consumed so, and
   * its stored row is to be deleted); otherwise the skip waits for its fire.
   */
  addSkip(skip: SkipRecord): { effects: Effect[]; planned: boolean } {
    const at = this.allSlots().filter((slot) => slot.run.scheduledTime === skip.at);
    const { effects, stopped } = stopAhead(at, skipReason(skip), 'skipped');
    const planned = stopped > 0;
    this.calendar.add(skip);
    if (planned) this.calendar.consume(skip.at);
    return { effects, planned };
  }

  /**
   * The job is paused (`note`: who and why): its scheduled fires are no longer recorded, and a
   * fire already planned ahead and not launched ends `skipped` with the pause as its reason —
   * nothing the pause was answered before goes out after it. Manual triggers still run.
   */
  pause(note: PauseNote | null): Effect[] {
    this.paused = true;
    this.pauseNote = note ?? this.pauseNote;
    return stopAhead(this.allSlots(), pausedReason(this.pauseNote), 'skipped').effects;
  }

  /** The freeze is over: the queue moves again (the scheduler catches the schedules up). */
  thaw(): Effect[] {
    this.frozen = null;
    return this.drain();
  }

  /** The job left the manifests: its queue ends `stopped`; running runs finish. */
  remove(): Effect[] {
    this.removed = true;
    return this.queue.splice(0).map(removedEnd);
  }

  // ---- internals ----

  /**
   * A reserved slot whose row the ledger refused (its instant was already recorded): its place
   * in a Replace chain is handed on (`handOn`), then it is freed; what waited for it moves.
   */
  private undo(slot: Slot, victim: Slot | undefined): Effect[] {
    const { effects, repointed } = handOn(this.slots, slot, victim);
    effects.push(...this.release(slot.run.id));
    for (const s of repointed)
      if (s.state === 'waiting' && !this.slots.has(s.waitFor ?? '')) effects.push(...wake(s));
    return effects;
  }

  private reserve(run: NewRun, waitFor: string | null, ahead: boolean): void {
    this.slots.set(run.id, {
      run,
      record: null,
      order: this.order++,
      state: 'claiming',
      stopReason: null,
      waitFor,
      ahead,
      due: false,
    });
  }

  private unqueue(id: string): NewRun | null {
    const i = this.queue.findIndex((r) => r.id === id);
    return i < 0 ? null : (this.queue.splice(i, 1)[0] as NewRun);
  }

  /** Frees a slot; whatever waited for it, and the queue, move. */
  private release(id: string): Effect[] {
    if (!this.slots.delete(id)) return [];
    const effects: Effect[] = [{ kind: 'released', id }];
    for (const s of this.slots.values())
      if (s.state === 'waiting' && s.waitFor === id) effects.push(...wake(s));
    effects.push(...this.drain());
    return effects;
  }

  /** Queued runs start while there is room (not for a removed or frozen job). */
  private drain(): Effect[] {
    const effects: Effect[] = [];
    if (this.removed || this.frozen) return effects;
    while (this.queue.length > 0 && hasRoom(this.policy, this.slots.size)) {
      const run = this.queue.shift() as NewRun;
      this.reserve(run, null, false);
      effects.push({ kind: 'start', run });
    }
    return effects;
  }
}
