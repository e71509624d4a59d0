/**
 * The steps of admission that need no lane (`lane.ts`): the rows and tickets a lane makes
 * (planned, ended, recorded as is) and the reasons it writes on them, and what happens to one
 * slot — launched, ended unstarted, stopped, woken — each returning the {@link Effect}s to
 * carry out. Pure and synchronous, like the lane.
 */
import type { FreezeRecord } from '../store/freeze-types.js';
import type { NewRun, RunRecord } from '../store/types.js';
import type { DecisionKind, Effect, Slot, Ticket } from './types.js';

export const replacedBy = (id: string): string => `replaced by run ${id}`;

/** The reason recorded on what a freeze kept from running. */
export const frozenReason = (f: FreezeRecord): string => `frozen: ${f.reason} (by ${f.by})`;

export function ticket(
  row: NewRun,
  decision: DecisionKind,
  ahead = false,
  victim: string | null = null,
): Ticket {
  return { row, decision, ahead, victim, skip: null };
}

/** The row of a run that starts at `at`: `planned` (claiming its run key), its start at `at`. */
export function planned(run: NewRun, at: number): NewRun {
  return { ...run, phase: 'planned', startedAt: at, dueAt: null };
}

export function ended(
  run: NewRun,
  now: number,
  outcome: 'skipped' | 'queue_full',
  reason: string,
): NewRun {
  return { ...run, phase: 'ended', outcome, endedAt: now, error: reason };
}

/** A row recorded as it is, outside any lane's admission (a missed fire). */
export function recordedAsIs(row: NewRun): Ticket {
  return ticket(row, 'record');
}

/** The slot's run is launched. */
export function launch(slot: Slot, run: RunRecord): Effect {
  slot.state = 'running';
  return { kind: 'launch', run };
}

/**
 * What stopping a slot whose `stopReason` is set takes now: a launched run is aborted; a
 * planned one ends at once; one being claimed ends when its claim comes back; a Replace
 * newcomer ends when its turn comes (not before: a newcomer that replaces it waits for it, and
 * so for the run it waits for); one already ending needs nothing more.
 */
export function stopEffects(slot: Slot): Effect[] {
  switch (slot.state) {
    case 'running':
      return [{ kind: 'abort', id: slot.run.id }];
    case 'claimed':
      return [endSlot(slot)];
    default:
      return [];
  }
}

/** Ends a slot's run that never sent anything; the slot is released once that is durable. */
export function endSlot(slot: Slot): Effect {
  slot.state = 'ending';
  return {
    kind: 'end',
    run: slot.run,
    outcome: slot.stopOutcome ?? 'stopped',
    reason: slot.stopReason ?? 'stopped',
    slot: true,
  };
}

/** A Replace newcomer whose turn has come: claimed now, or ended if it was stopped meanwhile. */
export function wake(slot: Slot): Effect[] {
  if (slot.stopReason !== null) return [endSlot(slot)];
  slot.state = 'claiming';
  return [{ kind: 'start', run: slot.run }];
}

/** What a run that already has a queued row does, by its ticket (`Lane.admitExisting`). */
export function existing(slots: ReadonlyMap<string, Slot>, t: Ticket, run: NewRun): Effect[] {
  switch (t.decision) {
    case 'start':
      return [{ kind: 'start', run }];
    case 'replace': {
      const slot = slots.get(run.id) as Slot;
      slot.state = 'waiting';
      const victim = t.victim === null ? undefined : slots.get(t.victim);
      const effects = victim ? stopEffects(victim) : [];
      if (!slots.has(slot.waitFor ?? '')) effects.push(...wake(slot));
      return effects;
    }
    case 'queue':
      return run.dueAt !== null ? [{ kind: 'due', id: run.id }] : [];
    default:
      return [
        {
          kind: 'end',
          run,
          outcome: t.decision === 'skip' ? 'skipped' : 'queue_full',
          reason: t.row.error ?? t.decision,
          slot: false,
        },
      ];
  }
}
