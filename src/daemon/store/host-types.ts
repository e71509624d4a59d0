/**
 * The store's side of host mode (SPEC §15): reports of `cronix trigger` shims (and pings) become
 * rows of the same ledger, trigger `host`. One rule makes the ledger of a watched job tell the
 * truth: **an expected instant ends with exactly one run that fired it or one `missed` row**.
 * It is the fire claim of the daemon's own runs (`fires`, insert-if-absent on
 * `(app, job, schedule index, instant)`), taken by whichever comes first:
 *
 * - a report of a run that fired the instant claims it; the watcher's `missed` row (an `insert`
 *   op with trigger `host`) then finds it taken and records nothing (`fire-exists`);
 * - a report arriving after the instant was recorded `missed` (a spooled one) takes the claim
 *   over: the `missed` row is deleted and the reported run recorded in its place;
 * - reported `skipped` and `duplicate` contenders, and a second host's run of an instant already
 *   claimed by a run, are extra rows with their own run ids and claim nothing.
 *
 * A run id is recorded once: a resent report changes nothing. An `ended` report completes the
 * `started` row of its run id (or records the run whole when the start was never received), and
 * supersedes the watcher's `crashed` (`no end report`) of a run whose end came late.
 * Host runs hold no run key (the shim's lock and state dir decide its duplicates) and are left
 * alone by the daemon's start-up recovery: only the watcher ends them `crashed`.
 */
import type { Report } from '../../contract/report.js';
import type { JobRef, RunRecord } from './run-types.js';

/** The error of a host run the watcher ended because no `ended` report came in time. */
export const NO_END_REPORT = 'no end report';

/** One report to record, with what the server measured when it arrived. */
export interface ReportWrite {
  report: Report;
  /** The server's clock when the report arrived (epoch ms): the row's `createdAt`. */
  receivedAt: number;
  /** Server − host clock (ms) as measured from the signed timestamp (metrics; not stored). */
  hostOffsetMs: number;
  /** Server − host clock (ms) when more than 60 s (flagged, stored on the run); null otherwise. */
  clockSkewMs: number | null;
  /** `startedAt − scheduledTime` (ms) when the start came later than the job's grace; else null. */
  latenessMs: number | null;
}

/** What recording one report did. */
export type ReportResult =
  /** A new row; `replaced`: the id of the `missed` row of its instant that it took over. */
  | { kind: 'recorded'; run: RunRecord; replaced: string | null }
  /** An `ended` report completed its run's row (or superseded a `no end report` crash). */
  | { kind: 'ended'; run: RunRecord }
  /** The run id was recorded already and this report adds nothing: a resend. */
  | { kind: 'unchanged'; run: RunRecord };

/** The newest report of a job: which run, which host, when. */
export interface LastReport extends JobRef {
  runId: string;
  host: string;
  /** When the server received the run's first report (epoch ms). */
  at: number;
}

/** Host-mode operations of the store (SPEC §15); see the module comment. */
export interface HostRunStore {
  /**
   * Records the reports in order in one durable transaction (a batch of the ingest's group
   * commit); one result per report. Not fenced: any replica accepts reports.
   */
  recordReports(writes: readonly ReportWrite[]): Promise<ReportResult[]>;
  /** Host runs started and not ended (phase `running`, trigger `host`), oldest first. */
  openHostRuns(): Promise<RunRecord[]>;
  /** The newest reported run of each given job that has one, in one query. */
  lastReports(jobs: readonly JobRef[]): Promise<LastReport[]>;
  /** The output tail an `ended` report carried for a run, or null. */
  runOutput(runId: string): Promise<string | null>;
}
