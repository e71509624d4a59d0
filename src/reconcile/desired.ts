/**
 * The desired state of a manifest (SPEC §6): one entry per enabled job and schedule index,
 * named `cronix-<app>-<job>-<index>`, with the change hash of (job, index). Pure.
 */
import { isJobEnabled, jobChangeHash } from '../contract/manifest/index.js';
import type { Manifest, Notifier } from '../contract/manifest/types.js';
import { entryId, type DesiredEntry, type ReportTarget } from './backend.js';

/** Options of {@link desiredEntries}. */
export interface DesiredOptions {
  /**
   * Secret refs from `--secret-ref` flags. When non-empty they replace every job's
   * `auth.secret_refs` in the spec files (the shim resolves them at fire time).
   */
  secretRefs?: readonly string[];
  /** `--report-to` / `--report-secret-ref`: recorded in every spec file (SPEC §15). */
  report?: ReportTarget;
}

/**
 * The entries `manifest` wants installed, in manifest order (jobs sorted by name, then schedule
 * index). Jobs with `enabled: false` have none, so their installed entries are deleted.
 */
export function desiredEntries(manifest: Manifest, options: DesiredOptions = {}): DesiredEntry[] {
  const flagRefs = options.secretRefs ?? [];
  const out: DesiredEntry[] = [];
  for (const job of manifest.jobs) {
    if (!isJobEnabled(job)) continue;
    const secretRefs = flagRefs.length > 0 ? [...flagRefs] : [...job.auth.secret_refs];
    // the notifiers its notify names: the shim sends its own notifications (SPEC §12)
    let notifiers: Record<string, Notifier> | undefined;
    for (const n of job.notify ?? []) {
      const notifier = manifest.notifiers?.[n.to];
      if (notifier) (notifiers ??= {})[n.to] = notifier;
    }
    job.schedules.forEach((schedule, index) => {
      out.push({
        id: entryId(manifest.app, job.name, index),
        app: manifest.app,
        job: job.name,
        scheduleIndex: index,
        hash: jobChangeHash(manifest.app, job, index),
        schedule,
        spec: job,
        secretRefs,
        ...(notifiers ? { notifiers } : {}),
        ...(options.report ? { report: options.report } : {}),
      });
    });
  }
  return out;
}

/**
 * Warnings about notifications the trigger shim will not send (SPEC §12): it sends webhook
 * notifications of its own fire only. A job that notifies an SMTP notifier, or lists `missed`
 * in its `on`, gets one sentence naming the job, the notifier and the way out (the daemon).
 * Printed by plan and apply for every host backend; they do not stop the plan. With `reporting`
 * (`--report-to`), `missed` is noticed by the `serve --watch` the shim reports to: no warning.
 */
export function shimNotifyWarnings(manifest: Manifest, reporting = false): string[] {
  const out: string[] = [];
  for (const job of manifest.jobs) {
    if (!isJobEnabled(job)) continue;
    for (const n of job.notify ?? []) {
      const where = `job ${JSON.stringify(`${manifest.app}/${job.name}`)} notify ${JSON.stringify(n.to)}`;
      if (manifest.notifiers?.[n.to]?.type === 'smtp')
        out.push(
          `${where}: the trigger shim sends webhook notifications only, so this SMTP notifier will receive nothing from the installed entries; use a webhook notifier, or run the job under cronix serve`,
        );
      else if (n.on?.includes('missed') && !reporting)
        out.push(
          `${where}: "missed" is noticed by the daemon only (the trigger shim never sees a fire that did not happen); report to a cronix serve --watch (apply --report-to, docs/host-monitoring.md) or run the job under cronix serve to be told about missed fires`,
        );
    }
  }
  return out;
}
