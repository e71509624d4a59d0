/**
 * Schedules of the seconds extension (SPEC §3): 6-field cron (`sec min hour dom month dow`) and
 * `@every` below a minute. Daemon mode and the systemd backend honour them; the backends whose
 * host scheduler counts whole minutes (crontab, Kubernetes CronJob, EventBridge Scheduler)
 * refuse them at plan time with the reason, through these pure helpers.
 */
import { echo } from '../../contract/echo.js';
import { parseSchedule, type Schedule } from '../../contract/schedule/index.js';
import type { DesiredEntry } from '../backend.js';

/** Where a seconds schedule can run instead. */
export const SECONDS_ALTERNATIVE =
  'run this job in daemon mode (`cronix serve`) or with `--backend systemd`, which honour seconds';

/**
 * Why a backend whose host scheduler has minute resolution cannot run `schedule`, or null when
 * it is not a seconds schedule. `dialect` says what the host scheduler does, e.g. "cron fires
 * at most once a minute, at second 0". A 6-field expression whose seconds field is `0` fires on
 * whole minutes: the reason then gives its 5-field form too.
 */
export function secondsRefusal(schedule: Schedule, dialect: string): string | null {
  if (schedule.kind === 'every') {
    if (schedule.intervalSeconds >= 60) return null;
    return (
      `schedule ${echo(schedule.source)} fires every ${schedule.intervalSeconds} s, but ` +
      `${dialect}; ${SECONDS_ALTERNATIVE}, or use an interval of whole minutes`
    );
  }
  if (schedule.fields === 5) return null;
  const reason =
    `schedule ${echo(schedule.source)} has a seconds field (6 fields: second minute hour ` +
    `day-of-month month day-of-week), but ${dialect}; ${SECONDS_ALTERNATIVE}`;
  if (schedule.secondResolution) return reason;
  const fiveFields = schedule.source.split(/\s+/).slice(1).join(' ');
  return `${reason}, or drop the seconds field: ${echo(fiveFields)} fires at the same instants`;
}

/**
 * Why a host-mode backend cannot run `schedule`: its day-of-month field lists `L` (the last day
 * of the month), which cronix matches exactly but no backend translates (classic cron and a
 * Kubernetes CronJob have no `L`; systemd's `~01` and EventBridge's `L` are not wired up);
 * null otherwise. Every backend asks this before it reads the parsed day-of-month table, which
 * does not hold `L`.
 */
export function lastDayRefusal(schedule: Schedule): string | null {
  if (schedule.kind !== 'cron' || !schedule.lastDom) return null;
  return (
    `schedule ${echo(schedule.source)} uses L (the last day of the month) in its day-of-month ` +
    'field, which host-mode backends do not translate; run this job under `cronix serve`, or ' +
    'list the days (e.g. 28-31) and let the job check the date'
  );
}

/**
 * {@link secondsRefusal} for a desired entry, naming the job (`job billing/settle: …`); null
 * when the entry's schedule is not a seconds schedule or does not parse (other checks report
 * an invalid schedule).
 */
export function refuseSecondsEntry(entry: DesiredEntry, dialect: string): string | null {
  const parsed = parseSchedule(entry.schedule);
  if (!parsed.ok) return null;
  const reason = secondsRefusal(parsed.schedule, dialect);
  return reason === null ? null : `job ${entry.app}/${entry.job}: ${reason}`;
}
