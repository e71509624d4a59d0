/**
 * A report as it arrives (SPEC §15): its signature is its authentication (the §4 scheme, by a
 * report secret of `serve --report-secret-ref`, 300 s of skew), then the JSON, the wire format
 * (`src/contract/report.ts`) and the watch (its app and job must be watched, its schedule
 * index one of the job's). Every refusal is a value with an HTTP status, a code, a message
 * that names the field and the value, and changes nothing. What passes becomes a
 * {@link ReportWrite} with the server's measurements: the host's clock offset, flagged past
 * 60 s, and the lateness of a start past the job's grace.
 */
import {
  CLOCK_SKEW_FLAG_SECONDS,
  parseReport,
  REPORT_MAX_SKEW_SECONDS,
  type Report,
} from '../../contract/report.js';
import { SIGNATURE_HEADER, verify } from '../../contract/signature.js';
import type { RegisteredJob } from '../registry.js';
import type { ReportWrite } from '../store/host-types.js';
import { graceMs } from './detect.js';

/** A refused report: HTTP status, error code, message, and the field when one is at fault. */
export interface Refusal {
  status: 400 | 401 | 404 | 413 | 503;
  code: string;
  message: string;
  path?: string;
}

/** What the server needs to judge a report. */
export interface ReceiveContext {
  /** Report secrets in rotation order (`--report-secret-ref`, repeatable). */
  secrets: readonly string[];
  /** The server's clock (epoch ms). */
  now: number;
  /** A watched job by `app/job`. */
  jobOf(key: string): RegisteredJob | undefined;
  /** Whether any watched job has this app. */
  watchesApp(app: string): boolean;
}

/** The signature check of a request (reports and signed pings); the signed time in seconds. */
export function checkSignature(
  ctx: Pick<ReceiveContext, 'secrets' | 'now'>,
  header: string | undefined,
  method: string,
  pathAndQuery: string,
  body: Uint8Array,
): { ok: true; timestamp: number } | { ok: false; refusal: Refusal } {
  const v = verify({
    header,
    secrets: ctx.secrets,
    method,
    path: pathAndQuery,
    body,
    now: ctx.now / 1000,
    maxSkewSeconds: REPORT_MAX_SKEW_SECONDS,
  });
  if (v.ok) return { ok: true, timestamp: v.timestamp };
  return {
    ok: false,
    refusal: {
      status: 401,
      code: v.code,
      message:
        v.code === 'MissingSignature'
          ? `reports are authenticated by their ${SIGNATURE_HEADER} header (the report secret's signature), and this one has none`
          : v.message,
    },
  };
}

/** The watched job a run names, or the refusal. */
export function watchedJob(
  ctx: Pick<ReceiveContext, 'jobOf' | 'watchesApp'>,
  app: string,
  job: string,
  scheduleIndex: number | null,
  field = '/run',
): { ok: true; job: RegisteredJob } | { ok: false; refusal: Refusal } {
  if (!ctx.watchesApp(app))
    return {
      ok: false,
      refusal: {
        status: 404,
        code: 'not_watched',
        message: `app ${JSON.stringify(app)} is not watched by this server (serve --watch)`,
        path: `${field}/app`,
      },
    };
  const found = ctx.jobOf(`${app}/${job}`);
  if (!found)
    return {
      ok: false,
      refusal: {
        status: 404,
        code: 'not_watched',
        message: `app ${JSON.stringify(app)} has no watched job ${JSON.stringify(job)}`,
        path: `${field}/job`,
      },
    };
  if (scheduleIndex !== null && scheduleIndex >= found.schedules.length)
    return {
      ok: false,
      refusal: {
        status: 400,
        code: 'invalid_report',
        message: `${field}/schedule_index must be below ${found.schedules.length} (the schedules of ${app}/${job}), got ${scheduleIndex}`,
        path: `${field}/schedule_index`,
      },
    };
  return { ok: true, job: found };
}

/** The server's measurements of a valid report from a watched job. */
export function reportWrite(
  report: Report,
  job: RegisteredJob,
  now: number,
  signedAt: number,
): ReportWrite {
  const skew = now - signedAt * 1000;
  const r = report.run;
  const late = r.startedAt - r.scheduledTime;
  return {
    report,
    receivedAt: now,
    hostOffsetMs: skew,
    // whole signed seconds and the network's delay: a second of slack beyond the threshold
    clockSkewMs: Math.abs(skew) > (CLOCK_SKEW_FLAG_SECONDS + 1) * 1000 ? skew : null,
    latenessMs: r.scheduleIndex !== null && late > graceMs(job) ? late : null,
  };
}

/** Verifies and validates one report body; the write to record, or the refusal. */
export function receiveReport(
  ctx: ReceiveContext,
  header: string | undefined,
  method: string,
  pathAndQuery: string,
  body: Uint8Array,
): { ok: true; write: ReportWrite; job: RegisteredJob } | { ok: false; refusal: Refusal } {
  const signed = checkSignature(ctx, header, method, pathAndQuery, body);
  if (!signed.ok) return signed;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return {
      ok: false,
      refusal: { status: 400, code: 'invalid_json', message: 'the report body is not valid JSON' },
    };
  }
  const parsed = parseReport(json);
  if (!parsed.ok)
    return {
      ok: false,
      refusal: {
        status: 400,
        code: 'invalid_report',
        message: parsed.error.message,
        path: parsed.error.field,
      },
    };
  const r = parsed.report.run;
  const found = watchedJob(ctx, r.app, r.job, r.scheduleIndex);
  if (!found.ok) return found;
  return {
    ok: true,
    write: reportWrite(parsed.report, found.job, ctx.now, signed.timestamp),
    job: found.job,
  };
}
