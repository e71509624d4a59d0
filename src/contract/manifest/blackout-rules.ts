/**
 * The rules of `policy.blackout` (SPEC §16 "Calendars") beyond its structure: each window is
 * exactly one kind — `{cron, duration_seconds}`, `{from, to}` or `{dates_file}` — with both
 * fields of its pair, a schedule that parses, and instants that are RFC 3339 with `from` before
 * `to`. The dates of a `dates_file` are read and checked by the manifest loader.
 */
import { parseSchedule } from '../schedule/cron.js';
import { rfc3339Like } from '../schedule/instant.js';
import { BLACKOUT_LIMITS } from './defaults.js';
import { childPath, isRecord, own, quote } from './describe.js';

type Add = (path: string, message: string) => void;

const KINDS = [['cron', 'duration_seconds'], ['from', 'to'], ['dates_file']] as const;

const EXPECTED =
  'a window is one of {"cron", "duration_seconds"}, {"from", "to"} or {"dates_file"}';

function instant(add: Add, path: string, value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const at = rfc3339Like(value);
  if (at === null)
    add(
      path,
      `expected an RFC 3339 instant with an offset (e.g. 2026-12-24T00:00:00+01:00), found ${quote(value)}`,
    );
  return at;
}

function checkWindow(add: Add, w: Record<string, unknown>, path: string): void {
  const kinds = KINDS.filter((fields) => fields.some((f) => own(w, f) !== undefined));
  if (kinds.length === 0) {
    add(
      path,
      'expected one of {"cron", "duration_seconds"}, {"from", "to"} or {"dates_file"}, found none of their fields',
    );
    return;
  }
  if (kinds.length > 1) {
    const found = kinds.map((k) => k.find((f) => own(w, f) !== undefined)).join('", "');
    add(
      path,
      `${EXPECTED}, found fields of ${kinds.length} kinds ("${found}"); write one window each`,
    );
    return;
  }
  const kind = kinds[0] as readonly string[];
  for (const f of kind)
    if (own(w, f) === undefined)
      add(path, `"${f}" is missing: ${kind.map((k) => `"${k}"`).join(' and ')} go together`);
  if (own(w, 'dates_file') === '')
    add(childPath(path, 'dates_file'), 'expected the path of a file of dates, found ""');
  const cron = own(w, 'cron');
  if (typeof cron === 'string') {
    const parsed = parseSchedule(cron);
    if (!parsed.ok) add(childPath(path, 'cron'), `invalid schedule: ${parsed.error}`);
  }
  const from = instant(add, childPath(path, 'from'), own(w, 'from'));
  const to = instant(add, childPath(path, 'to'), own(w, 'to'));
  if (from !== null && to !== null && from >= to)
    add(
      path,
      `expected "from" before "to" (to is excluded), found from ${quote(String(own(w, 'from')))} and to ${quote(String(own(w, 'to')))}`,
    );
}

/** Checks `policy.blackout` (an untrusted value) at `path`. */
export function checkBlackout(add: Add, blackout: unknown, path: string): void {
  if (!Array.isArray(blackout)) return;
  const count = Math.min(blackout.length, BLACKOUT_LIMITS.windows.max);
  for (let k = 0; k < count; k++) {
    const w: unknown = blackout[k];
    if (isRecord(w)) checkWindow(add, w, childPath(path, k));
  }
}
