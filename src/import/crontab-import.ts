/**
 * `cronix import crontab` (SPEC §14): an existing crontab, user or system format, as a manifest
 * plus one verdict per line. Pure: text and options in, values out.
 *
 * - `curl`/`wget` lines become HTTP jobs (method, URL, headers, body from their flags); every
 *   other command becomes a command job (SPEC §11): plain words run as `argv`, anything the shell
 *   would interpret runs as `[$SHELL or /bin/sh, "-c", command]`, exactly as cron ran it.
 * - `VAR=value` lines become the `env` of the command jobs below them (cron's own scoping);
 *   `CRON_TZ`/`TZ` set the `timezone` of the jobs below; `MAILTO` is a note (cronix mails
 *   nothing; SPEC §12 notifiers do); comment lines right above a job become its `description`.
 * - `@reboot` and commands using `%` (cron's stdin) are refused with the reason.
 * - Defaults reproduce cron: `concurrency: Allow` (cron starts a fire even while the previous one
 *   runs), `catchup.mode: none` (cron never runs missed fires), `retries.max_attempts: 1`,
 *   and the daemon's own time zone for lines before any `CRON_TZ`.
 */
import { LIMITS } from '../contract/manifest/defaults.js';
import { checkTimeZone, parseSchedule } from '../contract/schedule/index.js';
import { httpTool, parseCurl, parseWget } from './http-tools.js';
import { splitShellWords, stripDevNull } from './shell-words.js';

/** How to read the crontab. */
export interface ImportOptions {
  /** Application name of the manifest. */
  app: string;
  /** System format (`/etc/crontab`, `/etc/cron.d/*`): a user field after the schedule. */
  system: boolean;
  /** The cron daemon's time zone: what jobs before any `CRON_TZ`/`TZ` follow. */
  hostZone: string;
  /** Secret refs put on every HTTP job (`--secret-ref`); none by default. */
  secretRefs?: readonly string[];
}

/** What became of one line. */
export type VerdictKind =
  'job' | 'env' | 'timezone' | 'note' | 'description' | 'refused' | 'ignored';

/** One line's verdict (blank lines get none). */
export interface Verdict {
  /** 1-based line number. */
  line: number;
  verdict: VerdictKind;
  /** The job the line became or belongs to, when there is one. */
  job?: string;
  /** One human sentence. */
  message: string;
}

/** A manifest (input form, defaults written out) and the verdicts. */
export interface ImportResult {
  manifest: { version: 1; app: string; jobs: Record<string, unknown>[] };
  verdicts: Verdict[];
  /** Line numbers that became jobs: cron keeps firing them until they are removed. */
  importedLines: number[];
}

const SHORTCUTS: Record<string, string> = {
  '@yearly': '@yearly',
  '@annually': '@annually',
  '@monthly': '@monthly',
  '@weekly': '@weekly',
  '@daily': '@daily',
  '@midnight': '@midnight',
  '@hourly': '@hourly',
};

/**
 * Longest a job may run, cron having no limit: the manifest's maximum `timeout_seconds` for each
 * kind of job (a command: a day; an HTTP request: 600 s, the v1 limit).
 */
export const IMPORT_TIMEOUT_SECONDS = {
  command: LIMITS.timeoutSeconds.max,
  http: LIMITS.httpTimeoutSeconds.max,
} as const;

/** A manifest job name from free text: `[a-z][a-z0-9-]{0,62}`. */
export function slug(text: string, fallback: string): string {
  const s = text
    .toLowerCase()
    .replace(/\.(sh|py|rb|pl|php|js)$/, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  return s === '' ? fallback : s;
}

const INTERPRETERS = /^(php|python[0-9.]*|node|ruby|perl|bash|sh|dash)$/;

function nameFor(words: readonly string[], url: string | undefined): string {
  if (url !== undefined) {
    const u = new URL(url);
    const segments = u.pathname.split('/').filter((p) => p !== '');
    return slug(segments.at(-1) ?? u.hostname, 'http-job');
  }
  const first = (words[0] ?? '').slice((words[0] ?? '').lastIndexOf('/') + 1);
  // an interpreter's job is its script: `php /var/www/artisan` → artisan
  const script = INTERPRETERS.test(first)
    ? (words.find((w, i) => i > 0 && !w.startsWith('-')) ?? first)
    : (words.find((w, i) => i > 0 && /\.(sh|py|rb|pl|php|js)$/.test(w)) ?? words[0] ?? '');
  return slug(script.slice(script.lastIndexOf('/') + 1), 'command');
}

/** Cron's unescaped `%` (stdin follows) → null; `\%` → `%`. */
function unescapePercent(command: string): string | null {
  let out = '';
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (c === '\\' && command[i + 1] === '%') {
      out += '%';
      i++;
    } else if (c === '%') return null;
    else out += c;
  }
  return out;
}

const ENV_LINE = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;

function unquote(value: string): string {
  const m = /^(['"])(.*)\1$/.exec(value);
  return m ? (m[2] as string) : value;
}

interface Pending {
  comments: { line: number; text: string }[];
}

/** Imports crontab `text`. */
export function importCrontab(text: string, options: ImportOptions): ImportResult {
  const verdicts: Verdict[] = [];
  const jobs: Record<string, unknown>[] = [];
  const importedLines: number[] = [];
  const env: Record<string, string> = {};
  const used = new Set<string>();
  let timezone = options.hostZone;
  let shell = '/bin/sh';
  const pending: Pending = { comments: [] };
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();

  const flushComments = (reason: string): void => {
    for (const c of pending.comments)
      verdicts.push({ line: c.line, verdict: 'ignored', message: `comment ${reason}` });
    pending.comments = [];
  };
  const refuse = (line: number, message: string): void => {
    flushComments('above a refused line: not kept');
    verdicts.push({ line, verdict: 'refused', message });
  };

  lines.forEach((raw, i) => {
    const n = i + 1;
    const line = raw.trim();
    if (line === '') {
      flushComments('not directly above a job: not kept');
      return;
    }
    if (line.startsWith('#')) {
      const body = line.replace(/^#+\s*/, '');
      if (body === '') flushComments('not directly above a job: not kept');
      else pending.comments.push({ line: n, text: body });
      return;
    }
    const envMatch = /^[@0-9*]/.test(line) ? null : ENV_LINE.exec(line);
    if (envMatch) {
      flushComments('above a setting: not kept');
      const name = envMatch[1] as string;
      const value = unquote(envMatch[2] as string);
      if (name === 'CRON_TZ' || name === 'TZ') {
        const bad = checkTimeZone(value);
        if (bad !== null) {
          refuse(n, `${name}=${value}: ${bad}; the jobs below keep time zone ${timezone}`);
          return;
        }
        timezone = value;
        verdicts.push({
          line: n,
          verdict: 'timezone',
          message: `${name}=${value} → "timezone": "${value}" for the jobs below${name === 'TZ' ? ' (Debian cron schedules by its own zone and only passes TZ to the command; cronie uses CRON_TZ — check that cron really fired these jobs in this zone)' : ''}`,
        });
        return;
      }
      if (name === 'MAILTO') {
        verdicts.push({
          line: n,
          verdict: 'note',
          message: `MAILTO=${value}: cron mailed each job's output${value === '' ? ' to nobody' : ` to ${value}`}; cronix keeps the output in the run log and notifies through "notifiers"/"notify" (an smtp notifier mails failures)`,
        });
        return;
      }
      if (name === 'SHELL') {
        shell = value;
        verdicts.push({
          line: n,
          verdict: 'env',
          message: `SHELL=${value}: commands that need a shell run as ${value} -c`,
        });
        return;
      }
      if (name.toUpperCase().startsWith('CRONIX_')) {
        refuse(n, `${name}: CRONIX_* variables are reserved for cronix (rename the variable)`);
        return;
      }
      env[name] = value;
      verdicts.push({
        line: n,
        verdict: 'env',
        message: `${name} → "command.env" of the command jobs below`,
      });
      return;
    }

    // a job line
    const fields = line.split(/\s+/);
    let schedule: string;
    let rest: string[];
    if (fields[0]?.startsWith('@')) {
      const word = (fields[0] as string).toLowerCase();
      if (word === '@reboot') {
        refuse(
          n,
          '@reboot runs once at boot; cronix has no boot trigger (use a systemd unit with WantedBy=multi-user.target)',
        );
        return;
      }
      const s = SHORTCUTS[word];
      if (s === undefined) {
        refuse(
          n,
          `${fields[0]} is not a cron shortcut (@hourly @daily @midnight @weekly @monthly @yearly @annually)`,
        );
        return;
      }
      schedule = s;
      rest = fields.slice(1);
    } else {
      schedule = fields.slice(0, 5).join(' ');
      rest = fields.slice(5);
    }
    // the command keeps its own spacing: cut the schedule (and user) words off the raw line
    let user: string | undefined;
    let cut = line;
    for (let k = 0; k < fields.length - rest.length; k++) cut = cut.replace(/^\S+\s*/, '');
    if (options.system) {
      user = rest[0];
      cut = cut.replace(/^\S+\s*/, '');
    }
    if (cut === '' || (options.system && user === undefined)) {
      refuse(
        n,
        options.system
          ? 'expected "<schedule> <user> <command>" (system format)'
          : 'expected "<schedule> <command>"',
      );
      return;
    }
    const parsed = parseSchedule(schedule);
    if (!parsed.ok) {
      refuse(n, `schedule "${schedule}": ${parsed.error}`);
      return;
    }
    const command = unescapePercent(cut);
    if (command === null) {
      refuse(
        n,
        'the command uses "%", which cron turns into standard input; cronix gives commands no input (move the input into a script, or write \\% for a literal %)',
      );
      return;
    }

    const notes: string[] = [];
    if (user !== undefined && user !== 'root')
      notes.push(
        `ran as user ${user}: install with "cronix apply --cron-user ${user}" or run the command through runuser`,
      );
    const job: Record<string, unknown> = { name: '', schedule, timezone };
    const policy: Record<string, unknown> = {
      concurrency: 'Allow',
      timeout_seconds: IMPORT_TIMEOUT_SECONDS.command,
      retries: { max_attempts: 1 },
      catchup: { mode: 'none' },
    };
    let url: string | undefined;
    const devnull = stripDevNull(command);
    const plain = splitShellWords(devnull.command);
    const tool = plain.needsShell ? null : httpTool(plain.words[0] ?? '');
    const http =
      tool === 'curl'
        ? parseCurl(plain.words.slice(1))
        : tool === 'wget'
          ? parseWget(plain.words.slice(1))
          : null;
    if (http?.ok) {
      url = http.url;
      policy['timeout_seconds'] = IMPORT_TIMEOUT_SECONDS.http;
      job['request'] = {
        method: http.method,
        url: http.url,
        headers: http.headers,
        body: http.body,
      };
      if (http.timeoutSeconds !== undefined)
        policy['timeout_seconds'] = Math.min(
          Math.max(http.timeoutSeconds, 1),
          IMPORT_TIMEOUT_SECONDS.http,
        );
      if (http.maxAttempts !== undefined)
        policy['retries'] = { max_attempts: Math.min(Math.max(http.maxAttempts, 1), 10) };
      if (options.secretRefs !== undefined && options.secretRefs.length > 0)
        job['auth'] = { secret_refs: [...options.secretRefs] };
      else
        notes.push(
          'no auth.secret_refs: the request goes unsigned; plan/apply need --secret-ref (or add auth.secret_refs) because the shim signs every request',
        );
      notes.push(...http.notes);
    } else {
      if (http !== null && !http.ok) notes.push(`kept as a command: ${http.reason}`);
      const whole = splitShellWords(command);
      const argv =
        whole.needsShell || whole.words.length === 0 ? [shell, '-c', command] : whole.words;
      const cmd: Record<string, unknown> = { argv };
      if (Object.keys(env).length > 0) cmd['env'] = { ...env };
      job['command'] = cmd;
      if (argv[0] !== shell || argv[1] !== '-c') {
        if (!(argv[0] ?? '').startsWith('/'))
          notes.push(
            `${argv[0]} is looked up on PATH${env['PATH'] !== undefined ? '' : " (cron's PATH is /usr/bin:/bin)"}`,
          );
      }
    }
    job['policy'] = policy;

    const toolUrl =
      tool !== null ? plain.words.find((w) => /^https?:\/\/[^/\s]+/.test(w)) : undefined;
    let name = nameFor(
      plain.words.length > 0 ? plain.words : splitShellWords(command).words,
      url ?? toolUrl,
    );
    if (used.has(name)) {
      let k = 2;
      while (used.has(`${name}-${k}`)) k++;
      name = `${name}-${k}`;
    }
    used.add(name);
    job['name'] = name;
    if (pending.comments.length > 0) {
      const description = pending.comments
        .map((c) => c.text)
        .join(' ')
        .slice(0, 500);
      job['description'] = description;
      for (const c of pending.comments)
        verdicts.push({
          line: c.line,
          verdict: 'description',
          job: name,
          message: `comment → "description" of job ${name}`,
        });
      pending.comments = [];
    }
    // key order as in the manifest docs: name, schedule, timezone, description, request/command, policy, auth
    const ordered: Record<string, unknown> = {};
    for (const k of [
      'name',
      'schedule',
      'timezone',
      'description',
      'request',
      'command',
      'policy',
      'auth',
    ])
      if (job[k] !== undefined) ordered[k] = job[k];
    jobs.push(ordered);
    importedLines.push(n);
    verdicts.push({
      line: n,
      verdict: 'job',
      job: name,
      message: `${http?.ok ? `HTTP job ${name} (${http.method} ${http.url})` : `command job ${name}`}, ${schedule} in ${timezone}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}`,
    });
  });
  flushComments('at the end: not kept');
  verdicts.sort((a, b) => a.line - b.line);
  return { manifest: { version: 1, app: options.app, jobs }, verdicts, importedLines };
}
