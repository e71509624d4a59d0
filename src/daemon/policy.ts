/**
 * Pure policy decisions of the daemon (SPEC §7, §8), table-tested in
 * `test/daemon/policy.test.ts`: overlap admission, catch-up selection, jitter,
 * and the mapping from the engine's outcome to the ledger's.
 */
import { createHash } from 'node:crypto';
import type { Concurrency } from '../contract/manifest/types.js';
import type { FireOutcome } from '../contract/run.js';
import type { RunOutcome } from './store/types.js';

/** What happens to a fire or manual trigger. */
export type Admission = 'start' | 'skip' | 'queue' | 'queue_full' | 'replace';

/** The overlap limits of a job (defaults filled). */
export interface OverlapPolicy {
  concurrency: Concurrency;
  maxConcurrent: number;
  queueMax: number;
}

/**
 * `active < max_concurrent` → start. At the limit: Forbid skips, Replace
 * stops the oldest and starts, Enqueue queues up to `queue_max` then records
 * queue_full. Allow always starts.
 */
export function admit(policy: OverlapPolicy, active: number, queued: number): Admission {
  if (policy.concurrency === 'Allow') return 'start';
  if (hasRoom(policy, active)) {
    // an Enqueue job with a backlog keeps FIFO order: newcomers go behind it
    return policy.concurrency === 'Enqueue' && queued > 0 ? enqueue(policy, queued) : 'start';
  }
  switch (policy.concurrency) {
    case 'Forbid':
      return 'skip';
    case 'Replace':
      return 'replace';
    case 'Enqueue':
      return enqueue(policy, queued);
  }
}

/** Whether a job with `active` runs holding a slot may start one more (Allow always may). */
export function hasRoom(policy: OverlapPolicy, active: number): boolean {
  return policy.concurrency === 'Allow' || active < policy.maxConcurrent;
}

function enqueue(policy: OverlapPolicy, queued: number): Admission {
  return queued < policy.queueMax ? 'queue' : 'queue_full';
}

/** Catch-up settings (defaults filled; `windowSeconds` null = unlimited). */
export interface CatchupPolicy {
  mode: 'none' | 'latest' | 'all';
  windowSeconds: number | null;
  maxRuns: number;
}

/**
 * Splits fires missed during downtime (ascending epoch ms) into those to run
 * now and those to record as `missed`: only fires within the window count;
 * `latest` runs the newest of them, `all` the newest `maxRuns` in order.
 */
export function selectCatchup(
  missed: readonly number[],
  now: number,
  policy: CatchupPolicy,
): { run: number[]; missed: number[] } {
  if (policy.mode === 'none' || missed.length === 0) return { run: [], missed: [...missed] };
  const cutoff = policy.windowSeconds === null ? -Infinity : now - policy.windowSeconds * 1000;
  const eligible = missed.filter((t) => t >= cutoff);
  const run = policy.mode === 'latest' ? eligible.slice(-1) : eligible.slice(-policy.maxRuns);
  const chosen = new Set(run);
  return { run, missed: missed.filter((t) => !chosen.has(t)) };
}

/**
 * Jitter of one fire in ms: a stable offset from a hash of app/job/index in
 * [0, stable_seconds], plus `random` ∈ [0, 1) × random_seconds; the result is
 * capped so the fire happens before the next nominal fire.
 */
export function jitterMs(
  ref: { app: string; job: string; scheduleIndex: number },
  stableSeconds: number,
  randomSeconds: number,
  random: number,
  nominal: number,
  nextNominal: number | null,
): number {
  let offset = 0;
  if (stableSeconds > 0) {
    const h = createHash('sha256').update(`${ref.app}/${ref.job}/${ref.scheduleIndex}`).digest();
    offset += h.readUInt32BE(0) % (stableSeconds * 1000 + 1);
  }
  if (randomSeconds > 0) offset += Math.floor(random * randomSeconds * 1000);
  if (nextNominal !== null) offset = Math.min(offset, Math.max(0, nextNominal - nominal - 1000));
  return offset;
}

/** The ledger outcome of an engine outcome. */
export function ledgerOutcome(outcome: FireOutcome): RunOutcome {
  switch (outcome) {
    case 'success':
      return 'success';
    case 'app-rejected':
      return 'app_rejected';
    case 'retries-exhausted':
      return 'retries_exhausted';
    case 'duplicate':
      return 'duplicate';
    case 'stopped':
      return 'stopped';
    case 'lock-contended':
      return 'skipped';
    case 'lock-unavailable':
    case 'internal-error':
      return 'internal_error';
  }
}

/** A run holding a slot, as {@link pickVictim} sees it. */
export interface SlotView {
  id: string;
  /** Admission order within the job (lower = older). */
  order: number;
  /** Already being stopped (by an earlier Replace or a cancel). */
  stopping: boolean;
}

/**
 * Replace at the limit: the oldest slot not already being stopped is stopped
 * (`stop`), and the newcomer starts once it has ended (`waitFor` = the same
 * slot). When every slot is already being stopped, nothing more is stopped and
 * the newcomer waits for the oldest of them. Never picks a slot twice: the
 * caller marks the victim stopping before the next decision.
 */
export function pickVictim(slots: readonly SlotView[]): {
  stop: string | null;
  waitFor: string | null;
} {
  let oldest: SlotView | undefined;
  let oldestStopping: SlotView | undefined;
  for (const s of slots) {
    if (s.stopping) {
      if (!oldestStopping || s.order < oldestStopping.order) oldestStopping = s;
    } else if (!oldest || s.order < oldest.order) oldest = s;
  }
  if (oldest) return { stop: oldest.id, waitFor: oldest.id };
  return { stop: null, waitFor: oldestStopping?.id ?? null };
}

/**
 * The fires of one schedule in `(after, until]`, oldest first, as `next`
 * enumerates them; at most `limit` of them are kept (the newest), and `skipped`
 * counts the older ones dropped from the list. Stops after `maxSteps` fires
 * (then `truncated` is true and `skipped` is a lower bound).
 */
export function missedFires(
  next: (after: number) => number | null,
  after: number,
  until: number,
  limit: number,
  maxSteps = 10_000_000,
): { fires: number[]; skipped: number; truncated: boolean } {
  const fires: number[] = [];
  let skipped = 0;
  let steps = 0;
  let truncated = false;
  for (let t = next(after); t !== null && t <= until; t = next(t)) {
    if (++steps > maxSteps) {
      truncated = true;
      break;
    }
    fires.push(t);
    // drop the oldest in bulk (amortized O(1) per fire)
    if (fires.length >= 2 * limit + 1) skipped += fires.splice(0, fires.length - limit).length;
  }
  if (fires.length > limit) skipped += fires.splice(0, fires.length - limit).length;
  return { fires, skipped, truncated };
}
