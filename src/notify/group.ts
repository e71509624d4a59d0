/**
 * Grouping of a job's notifications (SPEC §12), as pure functions of a group's state: the
 * first `failed` (or `missed`) of a job notifies at once, later ones at most once per
 * `repeat_every_seconds` with the count since the last message, and the first success after
 * them notifies `recovered` once and closes the groups. One group per (job, notifier, kind).
 *
 * A group opens on a problem whether or not the notifier wants that event, so a notifier that
 * only asked for `recovered` still hears of the recovery.
 */

/** The durable state of one group. Times are epoch milliseconds. */
export interface GroupState {
  /** Problems were seen and no success since. */
  open: boolean;
  /** When this group last produced a message; null when it never did. */
  lastSentAt: number | null;
  /** Problems seen since the last message (not yet reported). */
  suppressed: number;
  /** Problems seen since the group opened. */
  total: number;
}

/** A closed group: the job is healthy. */
export const CLOSED: GroupState = { open: false, lastSentAt: null, suppressed: 0, total: 0 };

/** What to do about one event: send (with the count to report) or not, and the new state. */
export interface GroupDecision {
  send: boolean;
  /** Events the message stands for (≥ 1 when sent). */
  count: number;
  next: GroupState;
}

/**
 * A `failed` or `missed` event at `now`. `wanted`: the notifier asked for this event kind.
 * The first problem of a closed group is sent at once; later ones when `repeatMs` has passed
 * since the last message, carrying every problem since then.
 */
export function onProblem(
  state: GroupState,
  now: number,
  repeatMs: number,
  wanted: boolean,
): GroupDecision {
  const seen = state.open ? state : CLOSED;
  const pending = seen.suppressed + 1;
  const total = seen.total + 1;
  const due = !seen.open || seen.lastSentAt === null || now - seen.lastSentAt >= repeatMs;
  if (wanted && due)
    return {
      send: true,
      count: pending,
      next: { open: true, lastSentAt: now, suppressed: 0, total },
    };
  return {
    send: false,
    count: 0,
    next: { open: true, lastSentAt: seen.lastSentAt, suppressed: pending, total },
  };
}

/**
 * A success: when any of the job's problem groups for this notifier is open it is the
 * recovery — sent when `wanted`, with the number of problems since the groups opened — and
 * every group closes. Otherwise nothing happens.
 */
export function onSuccess(
  groups: readonly GroupState[],
  wanted: boolean,
): { send: boolean; count: number; recovered: boolean } {
  const open = groups.filter((g) => g.open);
  if (open.length === 0) return { send: false, count: 0, recovered: false };
  const count = open.reduce((n, g) => n + g.total, 0);
  return { send: wanted, count, recovered: true };
}
