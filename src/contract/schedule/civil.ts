/**
 * Proleptic Gregorian calendar arithmetic on plain integers (Howard Hinnant's
 * `days_from_civil` / `civil_from_days`). The schedule engine searches "naive"
 * wall-clock time with these instead of `Date` objects: no allocation, no zone.
 */

/** Milliseconds in a second. */
export const SECOND_MS = 1000;
/** Milliseconds in a minute. */
export const MINUTE_MS = 60_000;
/** Milliseconds in a day. */
export const DAY_MS = 86_400_000;
/** Minutes in a day. */
export const DAY_MINUTES = 1440;

/** Days since 1970-01-01 of the civil date `y-m-d` (month 1..12, day 1..31). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = m > 2 ? m - 3 : m + 9;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Civil year of a day number (days since 1970-01-01). */
export function civilFromDays(z: number): { y: number; m: number; d: number } {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

/** Whether `y` is a Gregorian leap year. */
export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Number of days in month `m` (1..12) of year `y`. */
export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : (MONTH_DAYS[m] as number);
}

/** Day of week (0 = Sunday .. 6 = Saturday) of a day number. */
export function weekdayOfDays(z: number): number {
  return (((z + 4) % 7) + 7) % 7;
}

/** UTC year of an instant in epoch milliseconds. */
export function utcYear(ms: number): number {
  return civilFromDays(Math.floor(ms / DAY_MS)).y;
}

/** Epoch milliseconds of 00:00 UTC on January 1st of `y`. */
export function yearStartMs(y: number): number {
  return daysFromCivil(y, 1, 1) * DAY_MS;
}

/**
 * Formats naive wall-clock epoch milliseconds (local time encoded as if UTC)
 * with an offset as RFC 3339, e.g. `2026-03-29T03:00:00+02:00`.
 */
export function formatLocal(utcMs: number, offsetMs: number): string {
  const local = new Date(utcMs + offsetMs).toISOString().slice(0, 19);
  return local + formatOffset(offsetMs);
}

/** Formats an offset in milliseconds as `Z`-less `+HH:MM` (or `+HH:MM:SS` for historic offsets). */
export function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const abs = Math.abs(Math.round(offsetMs / 1000));
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  const s = abs % 60;
  const hm = `${sign}${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
  return s === 0 ? hm : `${hm}:${String(s).padStart(2, '0')}`;
}
