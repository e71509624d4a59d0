/**
 * What the API and the web UI may show of a job's request (SPEC §4, §13: never
 * a signature or a secret). Static headers and URLs come from the manifest and
 * may carry credentials that were written there by hand; their values are
 * hidden by name.
 */

/** Shown instead of a hidden value. */
export const HIDDEN = '(hidden)';

const SENSITIVE =
  /authorization|cookie|token|secret|password|passwd|api[-_]?key|signature|^x-cron-signature$|credential|session|^sig$/i;

/** Whether a header or query parameter name may carry a credential. */
export function isSensitiveName(name: string): boolean {
  return SENSITIVE.test(name);
}

/** The manifest's static headers with sensitive values hidden, sorted by name. */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers).sort()) {
    out[name] = isSensitiveName(name) ? HIDDEN : (headers[name] as string);
  }
  return out;
}

/** A URL without its password and with sensitive query values hidden. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return HIDDEN;
  }
  if (u.password !== '') u.password = 'hidden';
  for (const key of [...u.searchParams.keys()]) {
    if (isSensitiveName(key)) u.searchParams.set(key, 'hidden');
  }
  return u.toString();
}
