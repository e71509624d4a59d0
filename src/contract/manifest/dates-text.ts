/**
 * The text of a blackout `dates_file` (SPEC §16 "Calendars"): one `YYYY-MM-DD` a line, `#`
 * starting a comment (a whole line, or after the date), blank lines allowed. Pure: the manifest
 * loader reads the file (`src/source/dates-files.ts`) and hands the text here.
 */
import { cut, echo } from '../echo.js';
import { daysInMonth } from '../schedule/civil.js';

/** Largest dates file read, bytes. */
export const MAX_DATES_FILE_BYTES = 1024 * 1024;
/** Most bad lines reported from one file; the rest are counted. */
export const MAX_DATE_ERRORS = 10;

/** One bad line: its 1-based number (null: a count of the bad lines not listed) and what is wrong. */
export interface DateLineError {
  line: number | null;
  message: string;
}

/** The dates of a file (sorted, each once), or its bad lines. */
export type DatesResult = { ok: true; dates: string[] } | { ok: false; errors: DateLineError[] };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Null when `text` is a real calendar date `YYYY-MM-DD`, else why not. */
export function dateProblem(text: string): string | null {
  const m = DATE.exec(text);
  if (!m) return `expected a date YYYY-MM-DD, found ${echo(text, 60)}`;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo))
    return `${echo(text)} is not a day of the calendar`;
  return null;
}

/** Reads a dates file's text; every bad line is reported (the first {@link MAX_DATE_ERRORS}). */
export function parseDatesText(text: string): DatesResult {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const dates = new Set<string>();
  const errors: DateLineError[] = [];
  let more = 0;
  const lines = body.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const hash = raw.indexOf('#');
    const value = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    if (value === '') continue;
    const problem = dateProblem(value);
    if (problem === null) dates.add(value);
    else if (errors.length < MAX_DATE_ERRORS) errors.push({ line: i + 1, message: problem });
    else more += 1;
  }
  if (more > 0) errors.push({ line: null, message: `${more} more bad line(s) not listed` });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, dates: [...dates].sort() };
}

/** How a dates file is named in a message: as written, cut to a readable length. */
export const fileName = (path: string): string => cut(path, 120);
