/**
 * Freezes as the leader holds them (SPEC §16 "Freeze"): the durable freezes of the store, each
 * lane told whether one covers its job (`Lane.freeze` / `Lane.thaw`: admission state, so every
 * path — schedule, plan-ahead, catch-up, manual, delayed, queued, replay, backfill — is stopped
 * by the lane, not by its caller), and the end of a freeze: by `unfreeze`, or by itself at its
 * `until` (a timer item).
 *
 * While a job is frozen its schedules' checkpoints stay where the freeze found them (the timer
 * keeps their next fires; `turn.ts` records nothing for them). When the freeze ends, each schedule
 * catches up from its checkpoint through `policy.catchup`: the runs it picks run as `catchup`, the
 * rest are recorded `missed` with the freeze's reason — explicit, never silent.
 */
import { echo } from '../contract/echo.js';
import { frozenReason, type Lane } from './admission/lane.js';
import { SchedulerError, type SchedulerCore } from './core.js';
import { catchUp } from './recovery.js';
import { freezeCovers, type FreezeRecord, type FreezeSpec } from './store/freeze-types.js';

export type { FreezeSpec } from './store/freeze-types.js';
import type { TimerLoop } from './timer.js';

/** A freeze's scope as text: `every job`, `app billing`, `billing/settle`. */
export function scopeName(app: string | null, job: string | null): string {
  if (app === null) return job === null ? 'every job' : `job ${job} of every app`;
  return job === null ? `app ${app}` : `${app}/${job}`;
}

/** The most specific freeze covering a job (a job's, then its app's, then every job's). */
function covering(list: readonly FreezeRecord[], lane: Lane): FreezeRecord | null {
  let best: FreezeRecord | null = null;
  for (const f of list) if (freezeCovers(f, lane.job.app, lane.job.job.name)) best = f; // widest first
  return best;
}

/** See the module comment. */
export class Freezes {
  private list: FreezeRecord[] = [];

  constructor(
    private readonly core: SchedulerCore,
    private readonly timer: TimerLoop,
  ) {}

  /** The freezes in force, widest scope first. */
  all(): FreezeRecord[] {
    return [...this.list];
  }

  /** Reads the store's freezes (start-up), ends those whose `until` has passed, applies the rest. */
  async load(now: number): Promise<void> {
    const stored = await this.core.deps.store.freezes();
    for (const f of stored)
      if (f.until !== null && f.until <= now) await this.core.deps.store.removeFreeze(f.app, f.job);
    this.list = stored.filter((f) => f.until === null || f.until > now);
    this.apply(now, false);
  }

  /** Freezes a scope (replacing its earlier freeze); the lanes it covers admit nothing more. */
  async freeze(spec: FreezeSpec, by: string): Promise<FreezeRecord> {
    const now = this.core.deps.clock.now();
    const { app, job } = spec;
    if (app !== null && job !== null && !this.core.lane(`${app}/${job}`))
      throw new SchedulerError('not_found', `no job ${echo(`${app}/${job}`)}`);
    if (app !== null && job === null && ![...this.core.lanes()].some((l) => l.job.app === app))
      throw new SchedulerError('not_found', `no app ${echo(app)}`);
    if (spec.until !== null && spec.until <= now)
      throw new SchedulerError('invalid_request', 'until must be in the future');
    const record: FreezeRecord = { ...spec, by, since: now };
    await this.core.deps.store.setFreeze(record);
    this.list = [...this.list.filter((f) => f.app !== app || f.job !== job), record].sort(
      widestFirst,
    );
    this.apply(now, true);
    this.core.events.emit('info', {
      msg: `${scopeName(app, job)} frozen by ${by}: ${spec.reason}`,
    });
    return record;
  }

  /** Ends the freeze of exactly this scope; the lanes no other freeze covers catch up. */
  async unfreeze(app: string | null, job: string | null, by: string): Promise<FreezeRecord> {
    const removed = await this.core.deps.store.removeFreeze(app, job);
    this.list = this.list.filter((f) => f.app !== app || f.job !== job);
    if (!removed) throw new SchedulerError('not_found', `${scopeName(app, job)} is not frozen`);
    this.apply(this.core.deps.clock.now(), true);
    this.core.events.emit('info', { msg: `${scopeName(app, job)} unfrozen by ${by}` });
    return removed;
  }

  /** The timer's `thaw` item: freezes whose `until` has come end by themselves. */
  async expire(now: number): Promise<void> {
    const over = this.list.filter((f) => f.until !== null && f.until <= now);
    if (over.length === 0) return this.arm();
    for (const f of over) await this.core.deps.store.removeFreeze(f.app, f.job);
    this.list = this.list.filter((f) => !over.includes(f));
    this.apply(now, true);
    for (const f of over)
      this.core.events.emit('info', { msg: `${scopeName(f.app, f.job)}: freeze ended (until)` });
  }

  /** Tells every live lane its freeze; a lane whose freeze ended catches up (if `live`). */
  apply(now: number, live: boolean): void {
    const work: Promise<unknown>[] = [];
    for (const lane of this.core.lanes()) {
      if (lane.removed) continue;
      const note = covering(this.list, lane);
      const was = lane.frozen;
      if (note && !was) this.core.pipeline.apply(lane, lane.freeze(note));
      else if (note) lane.frozen = note;
      else if (was) {
        this.core.pipeline.apply(lane, lane.thaw());
        if (live) work.push(...this.catchUp(lane, was, now));
      }
    }
    this.arm();
    // the catch-up's writes go through the ledger (retried there); a fenced term ends anyway
    void Promise.all(work).catch((err: Error) =>
      this.core.events.emit('warning', { msg: `catch-up after a freeze failed: ${err.message}` }),
    );
  }

  /** A lane's schedules catch up from their checkpoints; `missed` rows carry the freeze's reason. */
  private catchUp(lane: Lane, was: FreezeRecord, now: number): Promise<unknown>[] {
    const { schedules } = this.core;
    this.timer.removeWhere(
      (item) =>
        item.kind === 'fire' && item.key === lane.key && item.generation === schedules.generation,
    );
    const work: Promise<unknown>[] = [];
    for (let index = 0; index < lane.job.schedules.length; index++) {
      const after = schedules.last(lane, index) ?? now;
      work.push(catchUp(this.core, lane, index, after, now, false, frozenReason(was)));
    }
    return work;
  }

  /** The timer wakes for the earliest `until`. */
  private arm(): void {
    this.timer.removeWhere((item) => item.kind === 'thaw');
    let at: number | null = null;
    for (const f of this.list) if (f.until !== null && (at === null || f.until < at)) at = f.until;
    if (at !== null) this.timer.push({ at, kind: 'thaw' });
  }
}

/** Every job, then apps, then jobs; by name within each. */
function widestFirst(a: FreezeRecord, b: FreezeRecord): number {
  const rank = (f: FreezeRecord): number => (f.app === null ? 0 : 1) + (f.job === null ? 0 : 1);
  return (
    rank(a) - rank(b) ||
    (a.app ?? '').localeCompare(b.app ?? '') ||
    (a.job ?? '').localeCompare(b.job ?? '')
  );
}
