/**
 * `cronix import crontab --watch` (SPEC §15): keep the crontab as it is and have a
 * `cronix serve --watch` watch it. The imported manifest becomes a *watched* manifest (each job's
 * `policy.watch.grace_seconds` written out), and each imported line gets a suffix that pings the
 * server with the line's exit code after every run:
 *
 *     ; curl -fsS -m 5 --retry 3 -o /dev/null -X POST "<server>/api/v1/ping/<app>/<job>/$??token=<token>"
 *
 * `$?` is the exit status of the line's command list (`;` binds loosest, so `a && b; curl …`
 * reports the whole list), which the ping's `/{exit code}` form records: 0 is a success, any
 * other code a failure. The token is the job's ping token (`src/contract/ping.ts`, derived from
 * the report secret). curl's own exit status becomes the line's, which cron ignores. Pure.
 */
import { pingUrl } from '../contract/ping.js';
import { WATCH_GRACE } from '../contract/report.js';

/** The suffix to append to a crontab line whose job is `app/job`. */
export function watchSuffix(server: string, app: string, job: string, secret: string): string {
  const url = pingUrl(server, app, job, secret).replace('?', '/$??');
  return `; curl -fsS -m 5 --retry 3 -o /dev/null -X POST "${url}"`;
}

/** The imported jobs with `policy.watch.grace_seconds` written out (the default, 120 s). */
export function watchedJobs(jobs: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return jobs.map((job) => {
    const policy = (job['policy'] ?? {}) as Record<string, unknown>;
    return { ...job, policy: { ...policy, watch: { grace_seconds: WATCH_GRACE.default } } };
  });
}
