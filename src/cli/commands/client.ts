/**
 * API client commands: `jobs`, `runs`, `notifications`, `start`, `cancel`,
 * `pause`, `resume`, `replay`. Each calls the daemon's REST API and prints a table or, with
 * `-o json`, the API's JSON response.
 */
import { existsSync, readFileSync } from 'node:fs';
import { NOTIFY_EVENTS } from '../../contract/manifest/defaults.js';
import { parseInstant, parseJobName, rfc3339Utc } from '../../contract/run.js';
import { parseDuration } from '../../contract/schedule/index.js';
import { OUTCOME_CHOICES, parseOutcomes } from '../../daemon/store/outcomes.js';
import { NOTIFICATION_STATUSES } from '../../daemon/store/types.js';
import { EXIT, printJson, printLines, type OutputFormat } from '../output.js';

/** Where the daemon is. */
export interface ClientOptions {
  url?: string;
  tokenFile?: string;
  output: OutputFormat;
}

/** The daemon's base URL: `--url`, `$CRONIX_URL`, or the default. */
export function endpoint(o: Pick<ClientOptions, 'url'>): string {
  return (o.url ?? process.env['CRONIX_URL'] ?? 'http://127.0.0.1:7070').replace(/\/$/, '');
}

/** The API token: `$CRONIX_TOKEN`, else the token file. */
export function token(o: Pick<ClientOptions, 'tokenFile'>): string | undefined {
  if (process.env['CRONIX_TOKEN']) return process.env['CRONIX_TOKEN'];
  const file = o.tokenFile ?? '.cronix/token';
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/**
 * Calls the API as the CLI (`X-Cronix-Client: cli`: the audit log's `from`, SPEC §18); prints
 * errors; returns the JSON body or null after printing an error.
 */
export async function call(
  o: ClientOptions,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown> | null> {
  const t = token(o);
  let res: Response;
  try {
    res = await fetch(`${endpoint(o)}${path}`, {
      method,
      headers: {
        ...(t ? { authorization: `Bearer ${t}` } : {}),
        // the audit log's `from` (src/http/authorize.ts) and, without a named caller, who did it as
        // backfills, freezes and dismissals record it (src/http/actor.ts)
        'x-cronix-client': 'cli',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    process.stderr.write(
      `error: cannot reach the daemon at ${endpoint(o)}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message} (is "cronix serve" running? set --url or CRONIX_URL)\n`,
    );
    return null;
  }
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const e = (json['error'] ?? {}) as { code?: string; message?: string; path?: string };
    process.stderr.write(
      `error: ${res.status} ${e.code ?? ''}: ${e.path ? `${e.path}: ` : ''}${e.message ?? res.statusText}\n`,
    );
    return null;
  }
  return json;
}

export type Row = Record<string, unknown>;
const cell = (v: unknown): string =>
  v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(' | ') : String(v);

/** Rows as an aligned text table with upper-case headers. */
export function table(rows: Row[], columns: string[]): string[] {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]): string =>
    vals
      .map((v, i) => v.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [
    line(columns.map((c) => c.toUpperCase())),
    ...rows.map((r) => line(columns.map((c) => cell(r[c])))),
  ];
}

export function print(
  o: ClientOptions,
  json: Record<string, unknown>,
  rows: Row[],
  columns: string[],
): number {
  if (o.output === 'json') printJson(json);
  else printLines(table(rows, columns));
  return EXIT.ok;
}

const RUN_COLUMNS = [
  'id',
  'job',
  'trigger',
  'phase',
  'outcome',
  'attempts',
  'last_status',
  'duration',
  'scheduled_time',
  'error',
];

/** `1.234s`, `250ms`, `2m05s`: a run's or an attempt's duration for a table. */
export function duration(ms: unknown): string | null {
  if (typeof ms !== 'number') return null;
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 3 : 1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** A row whose `job` column reads `app/job`, the way logs, the UI and the API name jobs. */
export const named = (r: Row): Row =>
  typeof r['app'] === 'string' && typeof r['job'] === 'string'
    ? { ...r, job: `${r['app']}/${r['job']}` }
    : r;

const withDuration = (r: Row): Row => named({ ...r, duration: duration(r['duration_ms']) });

/** A job named `app/job` or `app.job`, or null after printing the usage error (`what` is the flag or argument). */
export function jobOf(what: string, text: string): { app: string; job: string } | null {
  const t = parseJobName(text);
  if (!t)
    process.stderr.write(
      `error: ${what} must name a job as app/job (or app.job), found ${JSON.stringify(text)}\n`,
    );
  return t;
}

/** `cronix jobs`. */
export async function jobsCommand(o: ClientOptions): Promise<number> {
  const json = await call(o, 'GET', '/api/v1/jobs');
  if (!json) return EXIT.error;
  // a paused job fires nothing on its schedule: say so where its next fire would be; a watched
  // job (serve --watch) is fired by hosts: say so, and which host reported last
  const rows = (json['jobs'] as Row[]).map((r) => {
    const last = r['last_report'] as Row | null | undefined;
    return named({
      ...(r['paused'] === true ? { ...r, next_fire: 'paused' } : r),
      fired_by:
        r['fired_by'] === 'host'
          ? `host (${last ? `last: ${String(last['host'])}` : 'no report yet'})`
          : (r['fired_by'] ?? 'daemon'),
    });
  });
  return print(o, json, rows, [
    'job',
    'schedules',
    'timezone',
    'next_fire',
    'paused',
    'last_outcome',
    'active',
    'queued',
    'fired_by',
  ]);
}

/**
 * The query of a list command from its filter flags: `--job app.job`, `--limit n` and flags
 * with a fixed set of values. Usage errors are caught here (exit 2), not left to the API's 400
 * (exit 1): returns the query, or null after printing the error.
 */
function listQuery(
  o: { job?: string; limit?: string },
  choices: [flag: string, value: string | undefined, allowed: readonly string[]][],
): URLSearchParams | null {
  const q = new URLSearchParams();
  const usage = (message: string): null => {
    process.stderr.write(`error: ${message}\n`);
    return null;
  };
  if (o.job) {
    const t = jobOf('--job', o.job);
    if (!t) return null;
    q.set('app', t.app);
    q.set('job', t.job);
  }
  for (const [flag, value, allowed] of choices) {
    if (value === undefined) continue;
    if (!allowed.includes(value))
      return usage(
        `--${flag} must be one of ${allowed.join(', ')}; found ${JSON.stringify(value)}`,
      );
    q.set(flag, value);
  }
  if (o.limit !== undefined) {
    if (!/^\d+$/.test(o.limit) || Number(o.limit) < 1 || Number(o.limit) > 1000)
      return usage(
        `--limit must be a whole number from 1 to 1000, found ${JSON.stringify(o.limit)}`,
      );
    q.set('limit', o.limit);
  }
  return q;
}

/** Fetches a filtered list from the API and prints its rows (`key` of the response). */
async function showList(
  o: ClientOptions,
  path: string,
  q: URLSearchParams,
  key: string,
  columns: string[],
  row: (r: Row) => Row = (r) => r,
): Promise<number> {
  const json = await call(o, 'GET', `${path}${q.size > 0 ? `?${q}` : ''}`);
  if (!json) return EXIT.error;
  return print(o, json, (json[key] as Row[]).map(row), columns);
}

/** `cronix runs [--job app/job] [--outcome X[,Y] | failed] [--limit n]`. */
export async function runsCommand(
  o: ClientOptions & { job?: string; outcome?: string; limit?: string },
): Promise<number> {
  const q = listQuery(o, []);
  if (!q) return EXIT.usage;
  if (o.outcome !== undefined) {
    // `failed`, the UI's names (`app rejected`) and lists (`crashed,missed`) too
    const parsed = parseOutcomes(o.outcome);
    if (!parsed.ok) {
      process.stderr.write(
        `error: --outcome must be one of ${OUTCOME_CHOICES}; found ${JSON.stringify(o.outcome)}\n`,
      );
      return EXIT.usage;
    }
    q.set('outcome', parsed.outcomes.join(','));
  }
  return showList(o, '/api/v1/runs', q, 'runs', RUN_COLUMNS, withDuration);
}

/** `cronix notifications [--job app.job] [--event E] [--status S] [--limit n]`. */
export async function notificationsCommand(
  o: ClientOptions & { job?: string; event?: string; status?: string; limit?: string },
): Promise<number> {
  const q = listQuery(o, [
    ['event', o.event, NOTIFY_EVENTS],
    ['status', o.status, NOTIFICATION_STATUSES],
  ]);
  if (!q) return EXIT.usage;
  return showList(
    o,
    '/api/v1/notifications',
    q,
    'notifications',
    [
      'id',
      'created_at',
      'job',
      'event',
      'notifier',
      'count',
      'status',
      'attempts',
      'last_status',
      'last_error',
    ],
    named,
  );
}

/** `cronix runs <id>`: one run, field by field, then its attempts. */
export async function runCommand(id: string, o: ClientOptions): Promise<number> {
  const json = await call(o, 'GET', `/api/v1/runs/${encodeURIComponent(id)}`);
  if (!json) return EXIT.error;
  if (o.output === 'json') {
    printJson(json);
    return EXIT.ok;
  }
  const run = withDuration(json);
  const fields = [
    'id',
    'run_key',
    'job',
    'trigger',
    'phase',
    'outcome',
    'error',
    'attempts',
    'last_status',
    'output_truncated',
    'output_error',
    'scheduled_time',
    'created_at',
    'started_at',
    'ended_at',
    'duration',
  ];
  const width = Math.max(...fields.map((f) => f.length));
  const attempts = ((json['attempt_log'] as Row[] | undefined) ?? []).map((a): Row => ({
    ...a,
    duration: duration(a['duration_ms']),
  }));
  printLines([
    ...fields.map((f) => `${f.padEnd(width)}  ${cell(run[f])}`),
    '',
    ...(attempts.length === 0
      ? ['no attempts were sent']
      : table(attempts, ['attempt', 'started_at', 'duration', 'status', 'error', 'traceparent'])),
    // what each HTTP attempt got back (the first 4 KiB, secrets redacted)
    ...attempts.flatMap((a) =>
      typeof a['response'] === 'string'
        ? [
            '',
            `attempt ${cell(a['attempt'])} response:`,
            ...a['response'].split('\n').map((l) => `  ${l}`),
          ]
        : [],
    ),
  ]);
  return EXIT.ok;
}

/** The API's largest delay, `after_seconds` (366 days). */
const MAX_DELAY_SECONDS = 366 * 86_400;

/**
 * The trigger body of `--at` / `--after`: an RFC 3339 instant or Unix seconds; a delay written
 * like `@every` (`90s`, `5m`, `1h30m`) or plain seconds. Or the usage error naming the formats.
 */
export function startWhen(o: {
  at?: string;
  after?: string;
}): { body: Record<string, unknown> } | { error: string } {
  if (o.at !== undefined) {
    const at = parseInstant(o.at);
    if (at === null)
      return {
        error: `--at: expected an RFC 3339 instant such as 2026-03-08T07:00:00Z (or Unix seconds), found ${JSON.stringify(o.at)}; for a delay use --after 1h30m`,
      };
    return { body: { at: rfc3339Utc(at) } };
  }
  if (o.after !== undefined) {
    const seconds = /^\d+$/.test(o.after) ? Number(o.after) : parseDuration(o.after);
    if (seconds === null || seconds > MAX_DELAY_SECONDS)
      return {
        error: `--after: expected a delay like 90s, 5m, 1h30m or 2h (hours, minutes and seconds as in "@every"; plain digits are seconds), at most 366 days, found ${JSON.stringify(o.after)}`,
      };
    return { body: { after_seconds: seconds } };
  }
  return { body: {} };
}

/** `cronix start app/job [--at T | --after D]`. */
export async function startCommand(
  text: string,
  o: ClientOptions & { at?: string; after?: string },
): Promise<number> {
  const t = jobOf('the job', text);
  if (!t) return EXIT.usage;
  if (o.at && o.after) {
    process.stderr.write('error: give --at or --after, not both\n');
    return EXIT.usage;
  }
  const when = startWhen(o);
  if ('error' in when) {
    process.stderr.write(`error: ${when.error}\n`);
    return EXIT.usage;
  }
  const body = when.body;
  const json = await call(o, 'POST', `/api/v1/jobs/${t.app}/${t.job}/trigger`, body);
  if (!json) return EXIT.error;
  const run = json['run'] as Row;
  return print(
    o,
    json,
    [named({ ...run, admission: json['admission'] })],
    ['id', 'job', 'admission', 'phase', 'outcome', 'scheduled_time'],
  );
}

/** `cronix cancel|replay <run-id>`. */
export async function runActionCommand(
  action: 'cancel' | 'replay',
  id: string,
  o: ClientOptions,
): Promise<number> {
  const json = await call(o, 'POST', `/api/v1/runs/${encodeURIComponent(id)}/${action}`, {});
  if (!json) return EXIT.error;
  const run = named(json['run'] as Row);
  // a cancel admits nothing: its answer is the run as it now stands (stopped, or stopping)
  if (action === 'cancel') return print(o, json, [run], ['id', 'job', 'phase', 'outcome', 'error']);
  return print(
    o,
    json,
    [{ ...run, admission: json['admission'] }],
    ['id', 'job', 'admission', 'phase', 'outcome', 'scheduled_time'],
  );
}

/** `cronix pause app/job [--reason TEXT]`, `cronix resume app/job`. */
export async function pauseCommand(
  action: 'pause' | 'resume',
  text: string,
  o: ClientOptions,
  reason?: string,
): Promise<number> {
  const t = jobOf('the job', text);
  if (!t) return EXIT.usage;
  const body = action === 'pause' && reason !== undefined ? { reason } : {};
  const json = await call(o, 'POST', `/api/v1/jobs/${t.app}/${t.job}/${action}`, body);
  if (!json) return EXIT.error;
  return print(o, json, [named(json)], ['job', 'paused']);
}
