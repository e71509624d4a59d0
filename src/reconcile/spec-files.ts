/**
 * The job spec files the shim reads (SPEC §5.1): `<spec-dir>/<app>.<job>.json`, one per job,
 * `{"app","schedule_index","secret_refs","job"}` with `job` in canonical form, mode 0640, plus
 * `"notifiers"` (canonical, only those the job's `notify` names) when the job has notifications,
 * and `"report_to"`, `"report_secret_refs"` with `cronix apply --report-to` (SPEC §15).
 *
 * One file serves every schedule of a job, so `schedule_index` is always 0 and the shim derives
 * which schedule fired from the fire time (docs/reconcile.md, "Spec files").
 */
import { readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJob, canonicalNotifiers } from '../contract/manifest/index.js';
import { writeFileAtomic } from '../io/atomic.js';
import { reportKeys, type DesiredEntry } from './backend.js';

/** Mode of spec files (SPEC §6). */
export const SPEC_FILE_MODE = 0o640;

/** One spec file to write. */
export interface SpecWrite {
  path: string;
  app: string;
  job: string;
  content: string;
}

/** What `apply` does to the spec dir. */
export interface SpecFileChanges {
  write: SpecWrite[];
  /** Paths of spec files of this app whose job is no longer desired. */
  remove: string[];
}

/** The spec file path of `app.job`. */
export function specFilePath(specDir: string, app: string, job: string): string {
  return join(specDir, `${app}.${job}.json`);
}

/** The exact bytes of one job's spec file. */
export function specFileContent(entry: DesiredEntry): string {
  const notifiers =
    entry.notifiers === undefined ? '' : `,"notifiers":${canonicalNotifiers(entry.notifiers)}`;
  return `{"app":${JSON.stringify(entry.app)},"schedule_index":0,"secret_refs":${JSON.stringify(entry.secretRefs)},"job":${canonicalJob(entry.spec)}${notifiers}${reportKeys(entry.report)}}\n`;
}

function readIfExists(path: string): { content: string; mode: number } | null {
  try {
    return { content: readFileSync(path, 'utf8'), mode: statSync(path).mode & 0o777 };
  } catch {
    return null;
  }
}

/**
 * Compares the spec dir with the desired jobs of `app`: files to write (missing, different
 * content, or another mode) and files of this app's jobs that are no longer desired.
 */
export function diffSpecFiles(
  specDir: string,
  app: string,
  desired: readonly DesiredEntry[],
): SpecFileChanges {
  const write: SpecWrite[] = [];
  const wanted = new Set<string>();
  for (const entry of desired) {
    if (entry.app !== app || wanted.has(entry.job)) continue;
    wanted.add(entry.job);
    const path = specFilePath(specDir, app, entry.job);
    const content = specFileContent(entry);
    const current = readIfExists(path);
    if (current === null || current.content !== content || current.mode !== SPEC_FILE_MODE) {
      write.push({ path, app, job: entry.job, content });
    }
  }
  const remove: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(specDir);
  } catch {
    // no spec dir yet: nothing to remove
  }
  const prefix = `${app}.`;
  for (const name of names.sort()) {
    if (!name.startsWith(prefix) || !name.endsWith('.json')) continue;
    const job = name.slice(prefix.length, -'.json'.length);
    if (/^[a-z][a-z0-9-]{0,62}$/.test(job) && !wanted.has(job)) remove.push(join(specDir, name));
  }
  return { write, remove };
}

/** Writes one spec file atomically with mode 0640. */
export function writeSpecFile(w: SpecWrite): void {
  writeFileAtomic(w.path, w.content, SPEC_FILE_MODE, { exactMode: true, fsync: true });
}

/** Removes a spec file; a file already gone is fine. */
export function removeSpecFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Reads a spec file as JSON, or null when absent or unreadable. */
export function readSpecFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return null;
  }
}
