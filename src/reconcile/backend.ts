/**
 * The backend seam of the reconciler (SPEC §6). A backend installs one owned
 * entry per (app, job, schedule index) into a host scheduler (crontab,
 * systemd timers, Kubernetes CronJobs, EventBridge Scheduler), carrying an
 * ownership marker with app, job, index and change hash. Every backend passes
 * the shared contract suite in `test/reconcile/contract.ts`.
 */
import type { Job, Notifier } from '../contract/manifest/types.js';

/** Backend names of `--backend`. */
export type BackendName = 'crontab' | 'systemd' | 'kubernetes' | 'aws-scheduler';

/**
 * Where and how the installed shim reports its fires (SPEC §15): `cronix apply --report-to URL
 * --report-secret-ref REF`. Recorded in every spec file (`report_to`, `report_secret_refs`).
 */
export interface ReportTarget {
  /** The `cronix serve --watch` base URL (http or https). */
  url: string;
  /** Refs of the report secret (SPEC §4 refs; the first resolved signs). */
  secretRefs: string[];
}

/**
 * The spec file's report keys (SPEC §15), `,"report_to":…,"report_secret_refs":[…]`, or
 * nothing without `--report-to`.
 */
export function reportKeys(report: ReportTarget | undefined): string {
  return report === undefined
    ? ''
    : `,"report_to":${JSON.stringify(report.url)},"report_secret_refs":${JSON.stringify(report.secretRefs)}`;
}

/** One entry the manifest wants installed. */
export interface DesiredEntry {
  /** `cronix-<app>-<job>-<index>`: the entry's name in the backend. */
  id: string;
  app: string;
  job: string;
  scheduleIndex: number;
  /** Change hash of (job, schedule index): 16 hex characters. */
  hash: string;
  /** The schedule at `scheduleIndex`, as written. */
  schedule: string;
  /** The job in canonical form (what the spec file carries). */
  spec: Job;
  /** Secret refs the shim resolves (from `--secret-ref`, else the job's `auth.secret_refs`). */
  secretRefs: string[];
  /** The notifiers the job's `notify` names (SPEC §12), for the shim's own notifications. */
  notifiers?: Record<string, Notifier>;
  /** Where the shim reports (SPEC §15), when `--report-to` was given. */
  report?: ReportTarget;
}

/** One entry found in the backend carrying our ownership marker. */
export interface OwnedEntry {
  id: string;
  app: string;
  job: string;
  scheduleIndex: number;
  hash: string;
  /**
   * Set when the installed entry no longer matches what its marker claims (hand-edited,
   * duplicated, or rendered with other backend flags such as `--trigger-bin`): why, in a few
   * words. The plan then updates the entry even though its hash is current.
   */
  modified?: string;
}

/** What `apply` executes, in this order: deletes, then updates, then creates. */
export interface ChangeSet {
  deletes: OwnedEntry[];
  updates: DesiredEntry[];
  creates: DesiredEntry[];
}

/** What `adopt` found and did (SPEC §14). */
export interface AdoptReport {
  /** Entry ids installed by the public cronix reconciler and now carrying our marker. */
  adopted: string[];
  /** Public entries of the app that the manifest does not have: removed (apply would delete them). */
  removed: string[];
}

/** Thrown when the backend cannot be reached (exit 3). */
export class BackendUnreachableError extends Error {
  override name = 'BackendUnreachableError';
}

/** Thrown when the target cannot be written (permissions, read-only file system): exit 1. */
export class BackendWriteError extends Error {
  override name = 'BackendWriteError';
}

/**
 * Thrown by a backend factory for unusable flags (a missing `--aws-target-arn`, a cron.d file
 * name with a dot…): a usage error, exit 2. The message names the flag, the value and the fix.
 */
export class BackendConfigError extends Error {
  override name = 'BackendConfigError';
}

/** A host scheduler cronix can reconcile onto. */
export interface Backend {
  readonly name: BackendName;
  /** Where entries go, for humans and the JSON output (`/etc/cron.d/cronix`, `namespace default`…). */
  readonly target?: string;
  /**
   * Messages for the operator gathered during `apply` (e.g. "no systemd here: the units
   * were written, run these commands"); the CLI prints them to stderr.
   */
  readonly notices?: readonly string[];
  /**
   * The command line the host scheduler runs for each entry, `<app>.<job>` standing for the job
   * (`/usr/bin/node /usr/lib/node_modules/cronix/dist/bin/cronix.mjs trigger <app>.<job> --spec-dir
   * /etc/cronix/jobs`), for backends that run this host's cronix (crontab, systemd); `plan` shows
   * it, so a wrong binary is seen before it is installed.
   */
  readonly triggerLine?: string;
  /** True when `apply` writes its output to stdout (render-only YAML): the CLI then keeps stdout for it. */
  readonly writesStdout?: boolean;
  /**
   * Whether `apply` writes the shim's spec files into `--spec-dir` on this machine (default
   * true). A backend whose shim reads its spec elsewhere (a Kubernetes ConfigMap) sets false.
   */
  readonly localSpecFiles?: boolean;
  /**
   * Every reason this backend cannot express `entry` faithfully (a time zone the cron
   * daemon cannot honour, a DOM/DOW combination a dialect cannot state,
   * `Enqueue` without a daemon…), each one sentence; empty when it can. Called for every
   * desired entry at plan time; any refusal stops the plan with nothing written.
   */
  refuse(entry: DesiredEntry): string[];
  /**
   * Warnings about entries the backend installs but that will likely fail at fire time (a
   * secret ref the scheduler's environment will not hold…), one sentence each naming the job,
   * the value and the fix. Printed by plan and apply; they do not stop the plan.
   */
  warnings?(entries: readonly DesiredEntry[]): string[];
  /**
   * Entries carrying our ownership marker, optionally only those of `app`.
   * Entries without the marker are never returned.
   * @throws {BackendUnreachableError}
   */
  list(app?: string): Promise<OwnedEntry[]>;
  /**
   * Applies a change set atomically where the backend allows (a crontab file
   * is replaced in one rename; API backends apply entry by entry in the
   * given order). Never touches entries without our marker. An empty change
   * set must change nothing at all (no write, no reload, no API call).
   * @throws {BackendUnreachableError | BackendWriteError}
   */
  apply(changes: ChangeSet): Promise<void>;
  /**
   * Takes over the entries of `app` installed by the public cronix reconciler (SPEC §14): each one
   * the manifest wants is replaced by ours, others are removed, with no moment where neither is
   * installed. With `dryRun` only reports. Backends without it cannot adopt.
   * @throws {BackendUnreachableError | BackendWriteError}
   */
  adopt?(desired: readonly DesiredEntry[], app: string, dryRun: boolean): Promise<AdoptReport>;
}

/** The entry id of (app, job, index). */
export function entryId(app: string, job: string, scheduleIndex: number): string {
  return `cronix-${app}-${job}-${scheduleIndex}`;
}
