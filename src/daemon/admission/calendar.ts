/**
 * A lane's calendar (SPEC §16 "Calendars"): the instants an operator skipped (`cronix skip`)
 * and the job's blackout windows, asked about each scheduled or catch-up fire. Manual triggers,
 * replays and backfills are not held: an operator who asks for a run gets it. Pure and
 * synchronous, like the lane that owns it.
 */
import type { Blackout } from '../../contract/calendar.js';
import { skipReason, type SkipRecord } from '../store/skip-types.js';
import type { NewRun } from '../store/types.js';

/** Why a fire is not run: its reason, and the skipped instant it consumes (null: a blackout). */
export interface Hold {
  reason: string;
  skip: number | null;
}

/** Triggers the calendar holds: the schedule's own fires. */
const HELD: ReadonlySet<NewRun['trigger']> = new Set(['schedule', 'catchup']);

/** See the module comment. */
export class Calendar {
  /** Made on the first skip: nearly no job has one, and an empty `Map` is ~300 bytes per job. */
  private skips: Map<number, SkipRecord> | null = null;
  /**
   * The skip consumed last: a second schedule firing at the same instant is skipped too, and a
   * repeated `skip` of that instant answers it.
   */
  private consumed: SkipRecord | null = null;

  /** Skips not consumed yet, by instant. */
  pending(): SkipRecord[] {
    return this.skips === null ? [] : [...this.skips.values()].sort((a, b) => a.at - b.at);
  }

  /** The skip of instant `at`, if one is pending. */
  skipAt(at: number): SkipRecord | undefined {
    return this.skips?.get(at);
  }

  /** The skip of instant `at`, pending or the one consumed last. */
  skipOf(at: number): SkipRecord | undefined {
    return this.skips?.get(at) ?? (this.consumed?.at === at ? this.consumed : undefined);
  }

  add(skip: SkipRecord): void {
    (this.skips ??= new Map()).set(skip.at, skip);
  }

  /** Consumes the skip of `at` (its fire was decided some other way, e.g. planned ahead). */
  consume(at: number): void {
    const skip = this.skips?.get(at);
    if (!skip) return;
    this.skips?.delete(at);
    this.consumed = skip;
  }

  /**
   * Whether a fire of `run` is held, and why: a pending skip of its instant first (consumed when
   * `consume`), then the first blackout window covering it; null for any other trigger.
   */
  hold(run: NewRun, blackout: Blackout | null, consume: boolean): Hold | null {
    if (!HELD.has(run.trigger)) return null;
    const at = run.scheduledTime;
    const skip = this.skips?.get(at);
    if (skip) {
      if (consume) this.consume(at);
      return { reason: skipReason(skip), skip: at };
    }
    if (this.consumed?.at === at) return { reason: skipReason(this.consumed), skip: at };
    const window = blackout?.at(at) ?? null;
    return window === null ? null : { reason: `blackout: ${window}`, skip: null };
  }
}
