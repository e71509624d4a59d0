/**
 * A strict RFC 3339 instant (`2026-12-24T00:00:00+01:00`, `…Z`, fractions allowed): the date
 * must be a day of the calendar and the time a time of the day, and the offset is required.
 * `Date.parse` alone rolls `2026-02-30` over into March; this does not.
 */
import { daysInMonth } from './civil.js';

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Epoch ms of a strict RFC 3339 instant, or null when `text` is not one. */
export function rfc3339Like(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((k) => Number(m[k]));
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > daysInMonth(y!, mo!)) return null;
  if (h! > 23 || mi! > 59 || s! > 59) return null;
  if (m[9] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return null;
  const ms = Date.parse(text.replace(' ', 'T').replace('t', 'T').replace('z', 'Z'));
  return Number.isNaN(ms) ? null : ms;
}
