/**
 * The unit directory of the systemd backend: finding our files (by their marker), spotting
 * files in the way, and the writes, each atomic. Errors become the backend seam's classes.
 */
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../io/atomic.js';
import { BackendUnreachableError, BackendWriteError, type DesiredEntry } from '../backend.js';
import {
  legacyUnitName,
  parseUnitFile,
  unitFileNames,
  unitName,
  unitSetting,
  type ParsedUnit,
  type UnitMarker,
} from './systemd-units.js';

/** The two files of one entry, as found (either may be missing). */
export interface UnitPair {
  service?: ParsedUnit;
  timer?: ParsedUnit;
}

const UNIT_FILE_RE = /^(cronix-[a-z0-9_-]+)\.(service|timer)$/;

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/** Whether a unit named `stem` may carry `mk`: its current name, or the old ambiguous one. */
function namesMarker(stem: string, mk: UnitMarker): boolean {
  return (
    stem === unitName(mk.app, mk.job, mk.scheduleIndex) ||
    stem === legacyUnitName(mk.app, mk.job, mk.scheduleIndex)
  );
}

/**
 * Our unit files in `dir`, by unit name: only regular files (never symlinks) whose marker names
 * the file itself (under the current or the old naming). A missing dir holds none.
 * @throws {BackendUnreachableError} when the dir or a file cannot be read.
 */
export function scanUnitDir(dir: string): Map<string, UnitPair> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return new Map();
    throw new BackendUnreachableError(
      `cannot read the systemd unit directory ${dir}: ${(err as Error).message}`,
    );
  }
  const found = new Map<string, UnitPair>();
  for (const name of names.sort()) {
    const m = UNIT_FILE_RE.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    let unit: ParsedUnit;
    try {
      if (!lstatSync(path).isFile()) continue; // symlinks and directories are never ours
      unit = parseUnitFile(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new BackendUnreachableError(`cannot read ${path}: ${(err as Error).message}`);
    }
    const id = m[1] as string;
    const mk = unit.marker;
    if (!mk || !namesMarker(id, mk)) continue;
    const slot = found.get(id) ?? {};
    slot[m[2] as 'service' | 'timer'] = unit;
    found.set(id, slot);
  }
  return found;
}

/**
 * Why a file that is not this entry's occupies one of its file names, or null.
 */
export function foreignInTheWay(dir: string, entry: DesiredEntry): string | null {
  for (const name of Object.values(
    unitFileNames(unitName(entry.app, entry.job, entry.scheduleIndex)),
  )) {
    const path = join(dir, name);
    let mk: UnitMarker | null;
    try {
      const st = lstatSync(path);
      mk = st.isFile() ? parseUnitFile(readFileSync(path, 'utf8')).marker : null;
    } catch (err) {
      if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') continue;
      return `cannot read ${path}: ${(err as Error).message}`;
    }
    if (
      mk === null ||
      mk.app !== entry.app ||
      mk.job !== entry.job ||
      mk.scheduleIndex !== entry.scheduleIndex
    ) {
      return (
        `${path} exists but carries no cronix marker for ${entry.id}, so it is not ours to ` +
        'replace; move it away (or delete it) and plan again'
      );
    }
  }
  return null;
}

/** Creates the unit dir if needed and checks it is writable, before anything is written. */
export function prepareUnitDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new BackendWriteError(
      `cannot write the systemd unit directory ${dir}: ${(err as Error).message} ` +
        '(run as root, or pass --systemd-unit-dir to a writable directory); nothing was changed',
    );
  }
}

/** A unit file's text, or null when it does not exist. */
export function readUnit(dir: string, name: string): string | null {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch (err) {
    if (errno(err) === 'ENOENT') return null;
    throw new BackendUnreachableError(`cannot read ${join(dir, name)}: ${(err as Error).message}`);
  }
}

/** Replaces a unit file atomically, mode exactly 0644, synced to disk before the rename. */
export function writeUnit(dir: string, name: string, text: string): void {
  try {
    writeFileAtomic(join(dir, name), text, 0o644, { exactMode: true, fsync: true });
  } catch (err) {
    throw new BackendWriteError(`cannot write ${join(dir, name)}: ${(err as Error).message}`);
  }
}

/** Deletes a unit file; one already gone is fine. */
export function removeUnit(dir: string, name: string): void {
  try {
    unlinkSync(join(dir, name));
  } catch (err) {
    if (errno(err) === 'ENOENT') return;
    throw new BackendWriteError(`cannot delete ${join(dir, name)}: ${(err as Error).message}`);
  }
}

/** A unit pair installed by the public cronix reconciler (`X-Cronix-*` keys, no marker line). */
export interface PublicUnit {
  /** Unit name without suffix (`cronix-<app>-<job>-<idx>`). */
  name: string;
  app: string;
  job: string;
  scheduleIndex: number;
  hasTimer: boolean;
  hasService: boolean;
}

/**
 * The public cronix reconciler's units of `app` in `dir`: regular `cronix-*.timer`/`.service`
 * files without our marker whose `X-Cronix-App=`, `X-Cronix-Job=` and `X-Cronix-Index=` keys name
 * the file (`cronix-<app>-<job>-<index>`), so a file that only looks similar is never taken.
 */
export function scanPublicUnits(dir: string, app: string): PublicUnit[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return [];
    throw new BackendUnreachableError(
      `cannot read the systemd unit directory ${dir}: ${(err as Error).message}`,
    );
  }
  const found = new Map<string, PublicUnit>();
  for (const name of names.sort()) {
    const m = UNIT_FILE_RE.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    let text: string;
    try {
      if (!lstatSync(path).isFile()) continue;
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new BackendUnreachableError(`cannot read ${path}: ${(err as Error).message}`);
    }
    if (parseUnitFile(text).marker !== null) continue; // ours
    const a = unitSetting(text, 'X-Cronix-App');
    const j = unitSetting(text, 'X-Cronix-Job');
    const i = unitSetting(text, 'X-Cronix-Index');
    if (a !== app || j === undefined || i === undefined || !/^\d{1,4}$/.test(i)) continue;
    const stem = m[1] as string;
    if (stem !== legacyUnitName(a, j, Number(i))) continue;
    const unit = found.get(stem) ?? {
      name: stem,
      app: a,
      job: j,
      scheduleIndex: Number(i),
      hasTimer: false,
      hasService: false,
    };
    if (m[2] === 'timer') unit.hasTimer = true;
    else unit.hasService = true;
    found.set(stem, unit);
  }
  return [...found.values()];
}
