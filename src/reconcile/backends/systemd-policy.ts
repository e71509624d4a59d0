/**
 * Which job policies a systemd timer can honour (SPEC §6, §8), decided per entry. Pure: the
 * reference instant for DST shifts is passed in.
 *
 * - `Enqueue` and `max_concurrent > 1` need the daemon's queue and slots: refused.
 * - systemd starts a unit only once at a time: a timer that elapses while its service is
 *   still running starts nothing. For `Forbid` that is the policy's own outcome (the
 *   overlapping fire does not run). For `Allow` (run alongside) and `Replace` (stop the old
 *   run) it is not, so they are refused when a fire can outlast the gap to the next one.
 * - Catch-up: `Persistent=true` runs the latest missed fire once when the timer starts again,
 *   however old it is, which is mode `latest` with no window; mode `none` is
 *   `Persistent=false`. Mode `all` and a `window_seconds` are refused.
 * - Jitter: `random_seconds` is `RandomizedDelaySec=` (a fresh uniform delay per fire), allowed
 *   while it stays below the gap to the next fire, so the shim still attributes the run to
 *   its nominal fire. `stable_seconds` is refused: systemd's only stable delay
 *   (`FixedRandomDelay=`) hashes the machine id, so each host would pick another offset than
 *   cronix's hash of app/job/index.
 */
import { BLACKOUT_NEEDS_SERVE, RATE_NEEDS_SERVE } from './crontab.js';
import { attemptStopSeconds, effectivePolicy } from '../../contract/manifest/index.js';
import type { Job } from '../../contract/manifest/types.js';
import type { Schedule } from '../../contract/schedule/index.js';
import { DST_HORIZON_MS, transitionsBetween } from './aws-dst.js';
import { runtimeMaxSeconds } from './systemd-units.js';

/** How the timer renders an accepted policy. */
export interface TimerPolicy {
  /** `Persistent=`. */
  persistent: boolean;
  /** `RandomizedDelaySec=` in seconds; 0 for none. */
  randomizedDelaySeconds: number;
}

/**
 * A lower bound of the time between two consecutive fires of `schedule` in `timezone`, in
 * seconds: the smallest gap between matching times of day (across midnight too), minus the
 * largest offset change of the zone from `now` over the DST horizon.
 */
export function minFireGapSeconds(schedule: Schedule, timezone: string, now: number): number {
  if (schedule.kind === 'every') return schedule.intervalSeconds;
  // fires of a day: every matching second of every matching minute (second 0 for 5 fields)
  const times: number[] = [];
  for (let h = 0; h < 24; h++) {
    if (schedule.hours[h] !== 1) continue;
    for (let m = 0; m < 60; m++) if (schedule.minutes[m] === 1) times.push(h * 60 + m);
  }
  const seconds: number[] = [];
  for (let sec = 0; sec < 60; sec++) if (schedule.seconds[sec] === 1) seconds.push(sec);
  const firstSecond = seconds[0] as number;
  const lastSecond = seconds[seconds.length - 1] as number;
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < seconds.length; i++) {
    gap = Math.min(gap, (seconds[i] as number) - (seconds[i - 1] as number)); // within a minute
  }
  const between = (a: number, b: number): number => (b - a) * 60 + firstSecond - lastSecond;
  const first = times[0] as number;
  gap = Math.min(gap, between(times[times.length - 1] as number, first + 1440)); // across midnight
  for (let i = 1; i < times.length; i++) {
    gap = Math.min(gap, between(times[i - 1] as number, times[i] as number));
  }
  let shift = 0;
  for (const tr of transitionsBetween(timezone, now, now + DST_HORIZON_MS)) {
    shift = Math.max(shift, Math.abs(tr.after - tr.before) / 1000);
  }
  return Math.max(0, gap - shift);
}

/** The timer settings for `job`'s policy, or every reason systemd cannot honour it. */
export function timerPolicy(
  job: Job,
  schedule: Schedule,
  now: number,
): { ok: true; timer: TimerPolicy } | { ok: false; reasons: string[] } {
  const p = effectivePolicy(job);
  const reasons: string[] = [];
  const refuse = (reason: string): void => void reasons.push(reason);
  if (job.policy.rate !== undefined) refuse(RATE_NEEDS_SERVE);
  if (job.policy.blackout !== undefined) refuse(BLACKOUT_NEEDS_SERVE);
  if (p.concurrency === 'Enqueue') {
    refuse(
      'concurrency "Enqueue" needs the queue of `cronix serve`; a systemd timer cannot queue ' +
        'fires — use Forbid, Replace or Allow, or run the job under `cronix serve`',
    );
  }
  if (p.max_concurrent > 1) {
    refuse(
      `policy.max_concurrent ${p.max_concurrent} needs the run slots of \`cronix serve\`; a ` +
        'systemd unit runs one fire at a time — remove it or run the job under `cronix serve`',
    );
  }
  if (p.catchup.mode === 'all') {
    refuse(
      'policy.catchup.mode "all" cannot be honoured: systemd\'s Persistent=true runs only the ' +
        'latest missed fire — use "latest" or "none", or run the job under `cronix serve`',
    );
  }
  if (p.catchup.mode === 'latest' && p.catchup.window_seconds !== null) {
    refuse(
      `policy.catchup.window_seconds ${p.catchup.window_seconds} cannot be honoured: ` +
        "systemd's Persistent=true catches up the latest missed fire however old it is — " +
        'remove the window, use mode "none", or run the job under `cronix serve`',
    );
  }
  if (p.jitter.stable_seconds > 0) {
    refuse(
      `policy.jitter.stable_seconds ${p.jitter.stable_seconds} cannot be honoured: systemd's ` +
        "stable delay (FixedRandomDelay=) derives from the host's machine id, not cronix's " +
        'per-job offset — use random_seconds, or run the job under `cronix serve`',
    );
  }
  const gap = minFireGapSeconds(schedule, job.timezone, now);
  if (p.jitter.random_seconds > 0 && p.jitter.random_seconds >= gap) {
    refuse(
      `policy.jitter.random_seconds ${p.jitter.random_seconds} reaches the next fire (fires ` +
        `can be ${gap} s apart); systemd's RandomizedDelaySec= would push a fire past its ` +
        'successor — use a smaller value',
    );
  }
  if (p.concurrency === 'Allow' || p.concurrency === 'Replace') {
    const runtime = runtimeMaxSeconds(job.policy, attemptStopSeconds(job));
    if (runtime + p.jitter.random_seconds >= gap) {
      const what =
        p.concurrency === 'Allow' ? 'run beside the previous one' : 'replace the previous one';
      refuse(
        `concurrency "${p.concurrency}": a fire may run ${runtime} s (all attempts, timeouts ` +
          `and backoffs + 30 s) but fires can be ${gap} s apart, and systemd starts a unit ` +
          `only once at a time, so an overlapping fire would be dropped instead of made to ${what} — ` +
          'lower timeout_seconds or retries.max_attempts, use Forbid, or run the job under `cronix serve`',
      );
    }
  }
  if (reasons.length > 0) return { ok: false, reasons };
  return {
    ok: true,
    timer: {
      persistent: p.catchup.mode !== 'none',
      randomizedDelaySeconds: p.jitter.random_seconds,
    },
  };
}
