/**
 * Where a host reports (SPEC §15): the base URL of a `cronix serve --watch` given to
 * `cronix apply --report-to`, `cronix trigger --report-to` or `$CRONIX_REPORT_URL`, and the
 * report endpoint below it. One check for every place that accepts such a URL (the ping URLs
 * are `ping.ts`'s).
 *
 * Pure: no clock, no I/O.
 */
import { echo } from './echo.js';
import { REPORT_PATH } from './report-constants.js';

/** Longest accepted base URL. */
export const MAX_REPORT_URL_CHARS = 2048;

/**
 * Why `url` cannot be a report base URL, or null when it can: an absolute `http`/`https` URL
 * without credentials, query or fragment (a path prefix, for a server behind a proxy, is fine).
 */
export function reportUrlProblem(url: string): string | null {
  const shown = echo(url, 120);
  if (url.length === 0 || url.length > MAX_REPORT_URL_CHARS) {
    return `expected the base URL of a cronix serve (http:// or https://, at most ${MAX_REPORT_URL_CHARS} characters), found ${shown}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `expected an absolute http:// or https:// URL such as https://cronix.example.com, found ${shown}`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `expected an http:// or https:// URL, found ${shown}`;
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return `must not carry credentials (reports are authenticated by their signature), found ${JSON.stringify(`${parsed.protocol}//…@${parsed.host}`)}`;
  }
  if (parsed.search !== '' || parsed.hash !== '' || url.includes('?') || url.includes('#')) {
    return `must be a base URL without query or fragment, found ${shown}`;
  }
  return null;
}

/** `base` without trailing slashes. */
function trimmed(base: string): string {
  return base.replace(/\/+$/, '');
}

/** The report endpoint below a base URL: `<base>/api/v1/reports`. */
export function reportEndpoint(base: string): string {
  return `${trimmed(base)}${REPORT_PATH}`;
}
