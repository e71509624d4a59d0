/**
 * Time-zone offsets and transitions for one IANA zone, computed from the
 * runtime's ICU data (Intl) once per zone and year, then served from a sorted
 * table. The schedule engine asks only two questions — "what is the offset
 * at t" and "which transitions surround t" — so a table lookup replaces an
 * `Intl.DateTimeFormat` call (about 2 µs) on the hot path.
 */
import { echo } from '../echo.js';
import { DAY_MS, utcYear, yearStartMs } from './civil.js';

/** An offset change: from `at` (epoch ms, UTC) on, local = UTC + `after`. */
export interface Transition {
  readonly at: number;
  /** Offset (local − UTC, ms) just before `at`. */
  readonly before: number;
  /** Offset from `at` on. */
  readonly after: number;
}

const FIXED_UTC = new Set([
  'UTC',
  'Etc/UTC',
  'Etc/UCT',
  'UCT',
  'Etc/Universal',
  'Universal',
  'Etc/Zulu',
  'Zulu',
  'GMT',
  'Etc/GMT',
  'Etc/GMT0',
  'Etc/GMT+0',
  'Etc/GMT-0',
  'GMT0',
  'Greenwich',
  'Etc/Greenwich',
]);

const OFFSET_RE = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Offset table of one zone, extended lazily a UTC year at a time. */
export class Zone {
  /** Zone name as given. */
  readonly name: string;
  private readonly fixed: boolean;
  private readonly format: Intl.DateTimeFormat | undefined;
  /** Transitions sorted by `at`, covering [firstYear, lastYear] completely. */
  private transitions: Transition[] = [];
  private firstYear = 0;
  private lastYear = -1;
  private constantOffset: number | undefined;

  constructor(name: string) {
    this.name = name;
    this.fixed = FIXED_UTC.has(name);
    this.format = this.fixed
      ? undefined
      : new Intl.DateTimeFormat('en-US', { timeZone: name, timeZoneName: 'longOffset' });
  }

  /** Offset (local − UTC) in ms at instant `t`, read from ICU. */
  private probe(t: number): number {
    if (!this.format) return 0;
    const m = OFFSET_RE.exec(this.format.format(t));
    if (!m || m[1] === undefined) return 0;
    const abs = (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)) * 1000;
    return m[1] === '-' ? -abs : abs;
  }

  /** Transitions within UTC year `y`, found by daily probes plus bisection to the second. */
  private scanYear(y: number): Transition[] {
    const out: Transition[] = [];
    const end = yearStartMs(y + 1);
    let t = yearStartMs(y);
    let off = this.probe(t);
    while (t < end) {
      const next = Math.min(t + DAY_MS, end);
      const nextOff = this.probe(next);
      if (nextOff !== off) {
        // bisect (t, next] for the first instant carrying a different offset
        let lo = t;
        let hi = next;
        while (hi - lo > 1000) {
          const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
          if (this.probe(mid) === off) lo = mid;
          else hi = mid;
        }
        const after = this.probe(hi);
        out.push({ at: hi, before: off, after });
        off = after;
        t = hi;
        continue;
      }
      t = next;
    }
    return out;
  }

  private cover(y: number): void {
    if (this.fixed) return;
    if (this.lastYear < this.firstYear) {
      this.transitions = this.scanYear(y);
      this.firstYear = this.lastYear = y;
      return;
    }
    while (y > this.lastYear) {
      this.lastYear += 1;
      this.transitions.push(...this.scanYear(this.lastYear));
    }
    while (y < this.firstYear) {
      this.firstYear -= 1;
      this.transitions.unshift(...this.scanYear(this.firstYear));
    }
  }

  /** Index of the first transition with `at > t` in the covered table. */
  private upperBound(t: number): number {
    const list = this.transitions;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((list[mid] as Transition).at <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Offset (local − UTC) in milliseconds at instant `t`. */
  offsetAt(t: number): number {
    if (this.fixed) return 0;
    this.cover(utcYear(t));
    const i = this.upperBound(t);
    const prev = this.transitions[i - 1];
    if (prev) return prev.after;
    const next = this.transitions[i];
    if (next) return next.before;
    // no transition anywhere in the covered years: the offset is constant there
    this.constantOffset ??= this.probe(yearStartMs(this.firstYear));
    return this.constantOffset;
  }

  /** The latest transition at or before `t`, looking back at least to the start of the previous year. */
  transitionAtOrBefore(t: number): Transition | undefined {
    if (this.fixed) return undefined;
    const y = utcYear(t);
    this.cover(y - 1);
    this.cover(y);
    return this.transitions[this.upperBound(t) - 1];
  }

  /** The first transition strictly after `t` and before `limit`, or undefined. */
  transitionAfter(t: number, limit: number): Transition | undefined {
    if (this.fixed) return undefined;
    const lastY = utcYear(limit);
    for (let y = utcYear(t); y <= lastY; y = Math.max(y, this.lastYear) + 1) {
      this.cover(y);
      const found = this.transitions[this.upperBound(t)];
      if (found) return found.at < limit ? found : undefined;
    }
    return undefined;
  }
}

const zones = new Map<string, Zone>();

/** The shared offset table for a zone name (the name must already be valid). */
export function getZone(name: string): Zone {
  let zone = zones.get(name);
  if (!zone) {
    zone = new Zone(name);
    zones.set(name, zone);
  }
  return zone;
}

/**
 * Checks that `name` is an IANA time-zone name this runtime knows.
 * Returns null when valid, else a message that names the value and the fix.
 */
export function checkTimeZone(name: unknown): string | null {
  // building an Intl.DateTimeFormat costs ~100 µs; valid names are few, so remember them
  if (typeof name === 'string' && validZones.has(name)) return null;
  const error = checkTimeZoneUncached(name);
  if (error === null && typeof name === 'string' && validZones.size < 4096) validZones.add(name);
  return error;
}

const validZones = new Set<string>(['UTC']);

function checkTimeZoneUncached(name: unknown): string | null {
  if (typeof name !== 'string' || name === '')
    return `expected an IANA time zone name such as "Europe/Berlin", found ${echo(String(name))}`;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) {
    return `expected an IANA time zone name such as "Europe/Berlin", found ${echo(String(name))}`;
  }
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return `unknown time zone ${echo(String(name))} (expected an IANA name such as "America/New_York")`;
  }
  if (resolved !== name && resolved.toLowerCase() === name.toLowerCase()) {
    return `time zone ${echo(String(name))} has the wrong letter case; use ${JSON.stringify(resolved)}`;
  }
  return null;
}
