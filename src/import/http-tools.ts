/**
 * `curl` and `wget` command lines as HTTP requests (SPEC §14). Pure. Only flags whose meaning an
 * HTTP job states faithfully are taken (method, URL, headers, body, time limit, retries) or are
 * harmless to drop (quiet, show-errors, fail, output to /dev/null); any other flag keeps the line
 * a command job, with the flag named in the verdict.
 */

/** The request a curl/wget line sends, or why it cannot be one. */
export type HttpToolResult =
  | {
      ok: true;
      tool: 'curl' | 'wget';
      method: string;
      url: string;
      headers: Record<string, string>;
      body: string;
      /** From `-m`/`--max-time` or `-T`/`--timeout`: the whole request's time limit. */
      timeoutSeconds?: number;
      /** From `--retry N` (N+1 attempts) or `--tries N`. */
      maxAttempts?: number;
      /** Differences the operator should know about. */
      notes: string[];
    }
  | { ok: false; reason: string };

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** The tool a command's first word names (`curl`, `/usr/bin/wget`), or null. */
export function httpTool(argv0: string): 'curl' | 'wget' | null {
  const base = argv0.slice(argv0.lastIndexOf('/') + 1);
  return base === 'curl' || base === 'wget' ? base : null;
}

function header(text: string): [string, string] | null {
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  const name = text.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return null;
  return [name, text.slice(colon + 1).trim()];
}

function seconds(text: string): number | null {
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : null;
}

/** curl flags that change nothing an HTTP job would do differently (output and verbosity). */
const CURL_QUIET = new Set([
  '-s',
  '--silent',
  '-S',
  '--show-error',
  '-f',
  '--fail',
  '--fail-with-body',
  '-q',
  '--disable',
  '-sS',
  '-Ss',
  '-fsS',
  '-fSs',
  '-sSf',
  '-sf',
  '-fs',
  '-Sf',
  '-fS',
  '-sfS',
  '-sSfL',
  '-fsSL',
  '-sL',
  '-L',
  '--location',
  '--compressed',
]);

/** Parses curl's words (after `curl`). */
export function parseCurl(args: readonly string[]): HttpToolResult {
  let method: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  let body: string | undefined;
  let timeoutSeconds: number | undefined;
  let maxAttempts: number | undefined;
  const notes: string[] = [];
  let failFlag = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = (): string | undefined => args[++i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const take = (): string | undefined => inline ?? value();
    if (!arg.startsWith('-') || arg === '-') {
      if (url !== undefined)
        return { ok: false, reason: `curl fetches several URLs (${url}, ${arg})` };
      url = arg;
      continue;
    }
    if (CURL_QUIET.has(flag)) {
      if (/^-[a-zA-Z]*f|^--fail/.test(flag)) failFlag = true;
      if (/^-[a-zA-Z]*L|^--location/.test(flag))
        notes.push('curl -L followed redirects; cronix does not (use the final URL)');
      continue;
    }
    switch (flag) {
      case '-X':
      case '--request': {
        const m = take()?.toUpperCase();
        if (m === undefined || !METHODS.has(m))
          return {
            ok: false,
            reason: `curl ${flag} ${m ?? ''} is not one of GET POST PUT PATCH DELETE`,
          };
        method = m;
        break;
      }
      case '-H':
      case '--header': {
        const h = header(take() ?? '');
        if (h === null) return { ok: false, reason: `curl ${flag} takes "Name: value"` };
        headers[h[0]] = h[1];
        break;
      }
      case '-d':
      case '--data':
      case '--data-raw':
      case '--data-binary':
      case '--data-ascii': {
        const d = take() ?? '';
        if (d.startsWith('@') && flag !== '--data-raw')
          return { ok: false, reason: `curl ${flag} ${d} reads the body from a file at each run` };
        body = body === undefined ? d : `${body}&${d}`;
        break;
      }
      case '--json': {
        const d = take() ?? '';
        if (d.startsWith('@'))
          return { ok: false, reason: `curl --json ${d} reads the body from a file` };
        body = d;
        headers['Content-Type'] ??= 'application/json';
        headers['Accept'] ??= 'application/json';
        break;
      }
      case '-A':
      case '--user-agent':
        headers['User-Agent'] = take() ?? '';
        break;
      case '-m':
      case '--max-time': {
        const s = seconds(take() ?? '');
        if (s === null) return { ok: false, reason: `curl ${flag} needs a number of seconds` };
        timeoutSeconds = s;
        break;
      }
      case '--connect-timeout':
        take();
        break;
      case '--retry': {
        const n = Number(take());
        if (!Number.isInteger(n) || n < 0)
          return { ok: false, reason: 'curl --retry needs a count' };
        maxAttempts = n + 1;
        break;
      }
      case '-o':
      case '--output': {
        const target = take();
        if (target !== '/dev/null')
          return { ok: false, reason: `curl ${flag} ${target ?? ''} saves the response to a file` };
        break;
      }
      default:
        return { ok: false, reason: `curl flag ${flag} has no HTTP-job equivalent` };
    }
  }
  if (url === undefined || !/^https?:\/\/[^/\s]+/.test(url))
    return {
      ok: false,
      reason: `curl has no http:// or https:// URL${url ? ` (found ${url})` : ''}`,
    };
  if (!failFlag)
    notes.push('curl without -f exited 0 on HTTP errors; cronix counts 4xx and 5xx as failures');
  return {
    ok: true,
    tool: 'curl',
    method: method ?? (body !== undefined ? 'POST' : 'GET'),
    url,
    headers,
    body: body ?? '',
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    notes,
  };
}

const WGET_QUIET = new Set(['-q', '--quiet', '-nv', '--no-verbose', '-qO-', '-qO', '-O-']);

/** Parses wget's words (after `wget`). */
export function parseWget(args: readonly string[]): HttpToolResult {
  let method: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  let body: string | undefined;
  let timeoutSeconds: number | undefined;
  let maxAttempts: number | undefined;
  let output: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const take = (): string | undefined => inline ?? args[++i];
    if (!arg.startsWith('-')) {
      if (url !== undefined)
        return { ok: false, reason: `wget fetches several URLs (${url}, ${arg})` };
      url = arg;
      continue;
    }
    if (WGET_QUIET.has(flag)) {
      if (flag === '-qO') output = take();
      else if (flag.endsWith('O-')) output = '-';
      continue;
    }
    switch (flag) {
      case '-O':
      case '--output-document':
        output = take();
        break;
      case '--method': {
        const m = take()?.toUpperCase();
        if (m === undefined || !METHODS.has(m))
          return {
            ok: false,
            reason: `wget --method ${m ?? ''} is not one of GET POST PUT PATCH DELETE`,
          };
        method = m;
        break;
      }
      case '--header': {
        const h = header(take() ?? '');
        if (h === null) return { ok: false, reason: 'wget --header takes "Name: value"' };
        headers[h[0]] = h[1];
        break;
      }
      case '--post-data':
      case '--body-data':
        body = take() ?? '';
        if (flag === '--post-data') method ??= 'POST';
        break;
      case '-T':
      case '--timeout': {
        const s = seconds(take() ?? '');
        if (s === null) return { ok: false, reason: `wget ${flag} needs a number of seconds` };
        timeoutSeconds = s;
        break;
      }
      case '-t':
      case '--tries': {
        const n = Number(take());
        if (!Number.isInteger(n) || n < 0)
          return { ok: false, reason: 'wget --tries needs a count' };
        maxAttempts = n === 0 ? 10 : n;
        break;
      }
      case '-U':
      case '--user-agent':
        headers['User-Agent'] = take() ?? '';
        break;
      default:
        return { ok: false, reason: `wget flag ${flag} has no HTTP-job equivalent` };
    }
  }
  if (output !== undefined && output !== '-' && output !== '/dev/null')
    return { ok: false, reason: `wget -O ${output} saves the response to a file` };
  if (output === undefined)
    return {
      ok: false,
      reason: 'wget without -O saves the response to a file in the working directory',
    };
  if (url === undefined || !/^https?:\/\/[^/\s]+/.test(url))
    return {
      ok: false,
      reason: `wget has no http:// or https:// URL${url ? ` (found ${url})` : ''}`,
    };
  const notes = ['wget follows redirects; cronix does not (use the final URL)'];
  if (maxAttempts === undefined)
    notes.push(
      'wget retried network errors up to 20 times by default; the job makes 1 attempt (set policy.retries.max_attempts to retry)',
    );
  return {
    ok: true,
    tool: 'wget',
    method: method ?? (body !== undefined ? 'POST' : 'GET'),
    url,
    headers,
    body: body ?? '',
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    notes,
  };
}
