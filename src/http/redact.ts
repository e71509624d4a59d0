/**
 * What the API and the web UI may show of a job's request (SPEC §4, §13: never a signature or
 * a secret). Static headers and URLs come from the manifest and may carry credentials written
 * there by hand, under any name (`X-Upstream-Key`, `Ocp-Apim-Subscription-Key`, `?auth=`): so
 * values are hidden unless their name is on an allowlist of names that describe the request
 * rather than authorize it. Headers from `request.headers_from_secrets` are always hidden.
 *
 * - Header values shown: {@link SHOWN_HEADERS}.
 * - Query values shown: {@link SHOWN_QUERY} (paging, dates, format, locale, dry runs, …); the
 *   names of every parameter are shown, so one can tell a request from another.
 * - The URL's user name and password (refused by the manifest anyway) and fragment are hidden;
 *   its scheme, host, port and path are shown as written (a secret does not belong in a path:
 *   put it in a header from `headers_from_secrets`).
 */

/** Shown instead of a hidden value. */
export const HIDDEN = '(hidden)';

/** Header names (lower case) whose values are shown. */
export const SHOWN_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'content-encoding',
  'content-language',
  'content-type',
  'pragma',
  'prefer',
  'user-agent',
]);

/** Query parameter names (lower case) whose values are shown. */
export const SHOWN_QUERY: ReadonlySet<string> = new Set([
  'action',
  'after',
  'before',
  'date',
  'days',
  'dry_run',
  'dryrun',
  'end',
  'env',
  'environment',
  'format',
  'from',
  'hours',
  'job',
  'kind',
  'lang',
  'limit',
  'locale',
  'mode',
  'offset',
  'order',
  'page',
  'per_page',
  'region',
  'since',
  'size',
  'sort',
  'start',
  'task',
  'to',
  'type',
  'tz',
  'until',
  'verbose',
  'version',
]);

/** Whether a header's value may be shown. */
export function headerShown(name: string): boolean {
  return SHOWN_HEADERS.has(name.toLowerCase());
}

/**
 * The manifest's static headers, sorted by name, each value shown only when its name is on
 * {@link SHOWN_HEADERS}; with `fromSecrets`, those names too, always hidden.
 */
export function redactHeaders(
  headers: Readonly<Record<string, string>>,
  fromSecrets: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  const names = [...Object.keys(headers), ...Object.keys(fromSecrets)].sort();
  for (const name of names) {
    const value = headers[name];
    out[name] =
      value !== undefined && !Object.hasOwn(fromSecrets, name) && headerShown(name)
        ? value
        : HIDDEN;
  }
  return out;
}

/** A URL with query values off {@link SHOWN_QUERY}, user info and fragment hidden. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return HIDDEN;
  }
  if (u.username !== '') u.username = 'hidden';
  if (u.password !== '') u.password = 'hidden';
  if (u.hash !== '') u.hash = 'hidden';
  if (u.search === '') return u.toString();
  const shown = new URLSearchParams();
  for (const [key, value] of u.searchParams)
    shown.append(key, SHOWN_QUERY.has(key.toLowerCase()) ? value : 'hidden');
  u.search = shown.toString();
  return u.toString();
}
