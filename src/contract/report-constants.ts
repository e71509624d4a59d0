/**
 * The constants of host-mode reports (SPEC §15), apart from the wire format (`report.ts`, which
 * re-exports them) so that `cronix trigger` can read them without loading the report validator:
 * a fire that does not report costs nothing of it.
 *
 * Pure.
 */

/** Path of the report endpoint, relative to the server's base URL. */
export const REPORT_PATH = '/api/v1/reports';

/** Body limit of one report (its own, not the API's). */
export const MAX_REPORT_BYTES = 1024 * 1024;

/** A command job's output tail carried by an `ended` report. */
export const MAX_REPORT_OUTPUT_BYTES = 64 * 1024;

/** At most this long per report send; then it is spooled. */
export const REPORT_TIMEOUT_MS = 2000;

/** Accepted distance between the signed timestamp and the server's clock (§4 skew). */
export const REPORT_MAX_SKEW_SECONDS = 300;

/** A report whose host clock is further than this from the server's is flagged. */
export const CLOCK_SKEW_FLAG_SECONDS = 60;

/** Bounds of `policy.watch.grace_seconds` and its default. */
export const WATCH_GRACE = { min: 10, max: 86_400, default: 120 } as const;

/** Environment variable naming the report URL when `--report-to` is not given. */
export const REPORT_URL_ENV = 'CRONIX_REPORT_URL';
