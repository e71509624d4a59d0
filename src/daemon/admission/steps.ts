/**
 * The steps of admission that need no lane (`lane.ts`): the rows and tickets a lane makes
 * (planned, ended, recorded as is) and the reasons it writes on them, and what happens to one
 * slot — launched, ended unstarted, stopped, woken — each returning the {@link Effect}s to
 * carry out. Pure and synchronous, like the lane.
 */
import type { FreezeRecord, PauseNote } from '../store/freeze-types.js';
import type { NewRun, RunRecord } from '../store/types.js';
import type { DecisionKind, Effect, Slot, Ticket } from './types.js';

export const replacedBy = (id: string): string => `replaced by run ${id}`;

/** The reason recorded on what a freeze kept from running. */
export const frozenReason = (f: FreezeRecord): string => `frozen: ${f.reason} (by ${f.by})`;

/** The reason recorded on a fire planned ahead that a pause kept from running. */
export const pausedReason = (by: PauseNote | null): string =>
  `paused${by ? ` by ${by.by}${by.reason ? `: ${by.reason}` : ''}` : ''}`;

/** The end of a queued run whose job left the manifests. */
export function removedEnd(run: NewRun): Effect {
  return { kind: 'end', run, outcome: 'stopped', reason: 'job removed', slot: false };
}

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

/**
 * Stops the runs planned ahead among `slots` that were not launched and are not already being
 * stopped (a freeze, a pause, a skip of their instant): a claimed one ends at once with `reason`
 * (and `outcome`, `stopped` by default), a claiming one once its row is durable.
 */
export function stopAhead(
  slots: readonly Slot[],
  reason: string,
  outcome?: 'skipped',
): { effects: Effect[]; stopped: number } {
  const effects: Effect[] = [];
  let stopped = 0;
  for (const slot of slots) {
    if (!slot.ahead || slot.stopReason !== null) continue;
    if (slot.state !== 'claiming' && slot.state !== 'claimed') continue;
    slot.stopReason = reason;
    if (outcome) slot.stopOutcome = outcome;
    effects.push(...stopEffects(slot));
    stopped += 1;
  }
  return { effects, stopped };
}

/** The slot a Replace newcomer `id` stops (marked when it was admitted), if any. */
export function victimOf(slots: ReadonlyMap<string, Slot>, id: string): Slot | undefined {
  const reason = replacedBy(id);
  for (const s of slots.values()) if (s.stopReason === reason) return s;
  return undefined;
}

/**
 * The Replace chain without `refused`, a slot whose row the ledger refused: runs that waited
 * for it wait for what it waited for (`repointed`); the newcomer that replaced it (its heir)
 * replaces its victim instead, so the chain never loses a link. The victim goes on only when
 * nothing was admitted after the refused slot; otherwise a later newcomer may have counted on
 * the victim stopping (it found every slot stopping and shares the victim's place), and the
 * victim is stopped as the refused slot's answer would have (two runs in flight for one place
 * otherwise). Returns the effects that stop the victim now.
 */
export function handOn(
  slots: ReadonlyMap<string, Slot>,
  refused: Slot,
  victim: Slot | undefined,
): { effects: Effect[]; repointed: Slot[] } {
  const id = refused.run.id;
  const effects: Effect[] = [];
  const repointed: Slot[] = [];
  let heir: Slot | undefined;
  for (const s of slots.values()) {
    if (s.waitFor !== id) continue;
    s.waitFor = refused.waitFor;
    repointed.push(s);
    if (refused.stopReason === replacedBy(s.run.id)) heir = s;
  }
  if (!victim) return { effects, repointed };
  if (heir) {
    victim.stopReason = replacedBy(heir.run.id);
    // an heir already recorded stops it now (otherwise its own answer does)
    if (heir.state === 'waiting') effects.push(...stopEffects(victim));
  } else if (![...slots.values()].some((s) => s.order > refused.order)) {
    victim.stopReason = null; // nothing was decided after it: the victim goes on
  } else {
    effects.push(...stopEffects(victim));
  }
  return { effects, repointed };
}
