/**
 * The desired state of a manifest (SPEC §6): one entry per enabled job and schedule index,
 * named `cronix-<app>-<job>-<index>`, with the change hash of (job, index). Pure.
 */
import { isJobEnabled, jobChangeHash } from '../contract/manifest/index.js';
import type { Manifest, Notifier } from '../contract/manifest/types.js';
import { entryId, type DesiredEntry } from './backend.js';

/** Options of {@link desiredEntries}. */
export interface DesiredOptions {
  /**
   * Secret refs from `--secret-ref` flags. When non-empty they replace every job's
   * `auth.secret_refs` in the spec files (the shim resolves them at fire time).
   */
  secretRefs?: readonly string[];
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
      });
    });
  }
  return out;
}
