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
  if (active < policy.maxConcurrent) {
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
