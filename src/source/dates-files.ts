/**
 * The dates of blackout `dates_file` windows (SPEC §16 "Calendars"), read when a manifest file
 * is loaded: a relative path is read from the manifest file's directory, each file once per
 * load, and its dates are attached to the normalized window (`BlackoutDates.dates`) for the
 * daemon's calendar. A file that cannot be read, is larger than 1 MiB or has a bad line is a
 * manifest error at the window's `dates_file`, naming the file and the line.
 */
import { open } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import {
  fileName,
  MAX_DATES_FILE_BYTES,
  parseDatesText,
  type DatesResult,
} from '../contract/manifest/dates-text.js';
import type { BlackoutDates, Manifest, ManifestError } from '../contract/manifest/types.js';

/** A file's dates, or why it could not be read (one message). */
type Read = DatesResult | { ok: false; unreadable: string };

async function readDates(path: string): Promise<Read> {
  let file;
  try {
    file = await open(path, 'r');
    const st = await file.stat();
    if (!st.isFile()) return { ok: false, unreadable: 'not a regular file' };
    if (st.size > MAX_DATES_FILE_BYTES) return { ok: false, unreadable: 'larger than 1 MiB' };
    const text = await file.readFile('utf8');
    if (Buffer.byteLength(text) > MAX_DATES_FILE_BYTES)
      return { ok: false, unreadable: 'larger than 1 MiB' };
    return parseDatesText(text);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : code;
    return { ok: false, unreadable: reason };
  } finally {
    await file?.close().catch(() => undefined);
  }
}

/** The input index of each job name (the normalized manifest sorts jobs by name). */
function inputIndexes(text: string): Map<string, number> {
  const out = new Map<string, number>();
  try {
    const raw = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text) as {
      jobs?: { name?: unknown }[];
    };
    raw.jobs?.forEach((j, i) => {
      if (typeof j.name === 'string') out.set(j.name, i);
    });
  } catch {
    // the manifest parsed already: not reached
  }
  return out;
}

/**
 * Reads the `dates_file` of every blackout window of `manifest` (loaded from `manifestPath`,
 * whose text was `text`) and attaches the dates; returns the problems (none: every window has
 * its dates).
 */
export async function attachDates(
  manifest: Manifest,
  manifestPath: string,
  text: string,
): Promise<ManifestError[]> {
  const windows: { job: string; index: number; w: BlackoutDates }[] = [];
  for (const job of manifest.jobs)
    job.policy.blackout?.forEach((w, index) => {
      if ('dates_file' in w) windows.push({ job: job.name, index, w });
    });
  if (windows.length === 0) return [];
  const reads = new Map<string, Promise<Read>>();
  const errors: ManifestError[] = [];
  const indexes = inputIndexes(text);
  for (const { job, index, w } of windows) {
    const abs = isAbsolute(w.dates_file)
      ? w.dates_file
      : resolve(dirname(manifestPath), w.dates_file);
    let read = reads.get(abs);
    if (read === undefined) reads.set(abs, (read = readDates(abs)));
    const r = await read;
    if (r.ok) {
      w.dates = r.dates;
      continue;
    }
    const path = `jobs/${indexes.get(job) ?? '?'}/policy/blackout/${index}/dates_file`;
    const name = fileName(w.dates_file);
    const where = abs === w.dates_file ? name : `${name} (${fileName(abs)})`;
    if ('unreadable' in r)
      errors.push({ path, message: `cannot read dates file ${where}: ${r.unreadable}` });
    else
      for (const e of r.errors)
        errors.push({
          path,
          message:
            e.line === null ? `${where}: ${e.message}` : `${where} line ${e.line}: ${e.message}`,
        });
  }
  return errors;
}
