/**
 * Run outcomes as people name them: the API's `outcome` filter and `cronix runs --outcome` take
 * one outcome, a comma-separated list, or the group `failed` — the outcomes a `failed`
 * notification is sent for and the UI's "failing" filter shows. Written as the UI writes them
 * (`app rejected`, `retries-exhausted`) they mean the same. Pure.
 */
import { RUN_OUTCOMES, type RunOutcome } from './types.js';

/** The outcomes that count as a failure (notifications' `failed`, the UI's "failing"). */
export const FAILED_OUTCOMES: readonly RunOutcome[] = [
  'app_rejected',
  'retries_exhausted',
  'crashed',
  'internal_error',
];

/** Names of outcome groups, with what each stands for. */
export const OUTCOME_GROUPS: Readonly<Record<string, readonly RunOutcome[]>> = {
  failed: FAILED_OUTCOMES,
  failing: FAILED_OUTCOMES,
};

/** What an outcome filter may say, for messages. */
export const OUTCOME_CHOICES = `${RUN_OUTCOMES.join(', ')}, or failed (${FAILED_OUTCOMES.join(', ')}); several separated by commas`;

/**
 * The outcomes `text` names (`success`, `failed`, `app rejected,crashed`), in the order of
 * {@link RUN_OUTCOMES} and without repeats; or the first word that names none.
 */
export function parseOutcomes(
  text: string,
): { ok: true; outcomes: RunOutcome[] } | { ok: false; unknown: string } {
  const wanted = new Set<RunOutcome>();
  for (const word of text.split(',')) {
    const name = word
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, '_');
    const group = Object.hasOwn(OUTCOME_GROUPS, name) ? OUTCOME_GROUPS[name] : undefined;
    if (group !== undefined) for (const o of group) wanted.add(o);
    else if ((RUN_OUTCOMES as readonly string[]).includes(name)) wanted.add(name as RunOutcome);
    else return { ok: false, unknown: word.trim() };
  }
  return { ok: true, outcomes: RUN_OUTCOMES.filter((o) => wanted.has(o)) };
}
