/**
 * Pings (SPEC §15): runs of watched jobs whose fires do not run the shim, reported by a plain
 * `curl` — `POST /api/v1/ping/{app}/{job}` (success), `/start`, `/fail`, `/{exit code}`.
 * A ping becomes a report like the shim's, so it is recorded the same way (one run or one
 * missed row per instant, resends change nothing):
 *
 * - the run is the one of the latest expected instant at or before now (§5's rule), its id
 *   derived from the job and the instant, so `/start` and the end of the same fire meet in one
 *   row and a ping that curl retried is recorded once;
 * - an end ping completes the newest open run this ping host started (a fire longer than its
 *   schedule's interval ends the run it started), or `?rid=` names it.
 */
import { createHash } from 'node:crypto';
import { pingTokenMatches } from '../../contract/ping.js';
import type { Report } from '../../contract/report.js';
import { runKey } from '../../contract/run.js';
import { fireServedAt } from '../../contract/schedule/index.js';
import type { RegisteredJob } from '../registry.js';
import type { RunRecord } from '../store/types.js';
import { checkSignature, reportWrite, watchedJob, type Refusal } from './receive.js';
import type { ReportWrite } from '../store/host-types.js';

/** What a ping says. */
export type PingKind = 'success' | 'start' | 'fail' | number;

/** A ping's path suffix as a kind: ``, `start`, `fail`, or an exit code 0..255. */
export function pingKind(suffix: string | undefined): PingKind | null {
  if (suffix === undefined || suffix === '') return 'success';
  if (suffix === 'start' || suffix === 'fail') return suffix;
  if (/^\d{1,3}$/.test(suffix) && Number(suffix) <= 255) return Number(suffix);
  return null;
}

/** A ping as it arrived. */
export interface PingRequest {
  app: string;
  job: string;
  kind: PingKind;
  /** `?host=`: who pings; default `ping`. */
  host: string;
  /** `?rid=`: the run an end ping ends. */
  rid: string | null;
  token: string | null;
  signature: string | undefined;
  method: string;
  pathAndQuery: string;
  body: Uint8Array;
}

/** What the ping decision needs. */
export interface PingContext {
  secrets: readonly string[];
  now: number;
  jobOf(key: string): RegisteredJob | undefined;
  watchesApp(app: string): boolean;
  /** Open host runs of a job. */
  openRuns(app: string, job: string): Promise<RunRecord[]>;
}

const HOST = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,254}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The run id of a ping's fire: a UUID (version 8) from the job, schedule and instant. */
export function pingRunId(app: string, job: string, index: number, at: number): string {
  const h = createHash('sha256').update(`cronix-ping:${app}/${job}#${index}#${at}`).digest('hex');
  const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function refuse(status: Refusal['status'], code: string, message: string, path?: string) {
  return { ok: false as const, refusal: { status, code, message, ...(path ? { path } : {}) } };
}

/** The latest expected instant at or before now, over the job's schedules. */
function servedInstant(job: RegisteredJob, now: number): { index: number; at: number } | null {
  let best: { index: number; at: number } | null = null;
  job.schedules.forEach((s, index) => {
    const at = fireServedAt(s, job.job.timezone, now);
    if (at !== null && (best === null || at > best.at)) best = { index, at };
  });
  return best;
}

/** Authenticates and turns a ping into the report write to record, or the refusal. */
export async function receivePing(
  ctx: PingContext,
  p: PingRequest,
): Promise<{ ok: true; write: ReportWrite } | { ok: false; refusal: Refusal }> {
  let signedAt = ctx.now / 1000;
  if (p.token !== null) {
    if (!pingTokenMatches(ctx.secrets, p.app, p.job, p.token))
      return refuse(
        401,
        'invalid_ping_token',
        `the ping token is not the one of ${p.app}/${p.job}`,
      );
  } else {
    const signed = checkSignature(ctx, p.signature, p.method, p.pathAndQuery, p.body);
    if (!signed.ok)
      return signed.refusal.code === 'MissingSignature'
        ? refuse(
            401,
            'MissingSignature',
            'a ping needs its ping token (?token= or X-Cronix-Ping-Token, see cronix ping-url) or an X-Cron-Signature',
          )
        : signed;
    signedAt = signed.timestamp;
  }
  if (!HOST.test(p.host))
    return refuse(
      400,
      'invalid_request',
      `host must be a host name, got ${JSON.stringify(p.host.slice(0, 60))}`,
      'host',
    );
  if (p.rid !== null && !UUID.test(p.rid))
    return refuse(
      400,
      'invalid_request',
      `rid must be a run id (UUID), got ${JSON.stringify(p.rid.slice(0, 60))}`,
      'rid',
    );
  const found = watchedJob(ctx, p.app, p.job, null, '');
  if (!found.ok) return found;
  const job = found.job;
  const now = ctx.now;
  let target: { id: string; index: number; at: number; startedAt: number } | null = null;
  if (p.kind !== 'start') {
    const open = (await ctx.openRuns(p.app, p.job)).filter(
      (r) =>
        (p.rid !== null ? r.id === p.rid.toLowerCase() : r.host === p.host) &&
        r.scheduleIndex !== null,
    );
    const newest = open.sort((a, b) => b.scheduledTime - a.scheduledTime)[0];
    if (newest)
      target = {
        id: newest.id,
        index: newest.scheduleIndex as number,
        at: newest.scheduledTime,
        startedAt: newest.startedAt ?? now,
      };
  }
  if (target === null) {
    const served = servedInstant(job, now);
    if (served === null)
      return refuse(404, 'no_instant', `${p.app}/${p.job} has no expected fire at or before now`);
    target = {
      id: p.rid?.toLowerCase() ?? pingRunId(p.app, p.job, served.index, served.at),
      ...served,
      startedAt: now,
    };
  }
  const ended = p.kind !== 'start';
  const exitCode =
    typeof p.kind === 'number' ? p.kind : p.kind === 'fail' ? null : ended ? 0 : null;
  const success = p.kind === 'success' || p.kind === 0;
  const report: Report = {
    kind: ended ? 'ended' : 'started',
    spoolDropped: 0,
    run: {
      id: target.id,
      runKey: runKey(p.app, p.job, target.at, job.hashes[target.index] as string),
      app: p.app,
      job: p.job,
      scheduleIndex: target.index,
      scheduledTime: target.at,
      host: p.host,
      startedAt: target.startedAt,
      fencingToken: null,
      endedAt: ended ? now : null,
      outcome: ended ? (success ? 'success' : 'retries_exhausted') : null,
      exitCode,
      attempts: 1,
      lastStatus: null,
      error:
        !ended || success
          ? null
          : exitCode === null
            ? 'failure reported by ping'
            : `exit code ${exitCode}`,
      durationMs: ended ? now - target.startedAt : null,
      attemptLog: [],
      output: null,
      outputTruncated: false,
    },
  };
  return { ok: true, write: reportWrite(report, job, now, signedAt) };
}
