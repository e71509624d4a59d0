/**
 * API client commands: `jobs`, `runs`, `notifications`, `start`, `cancel`,
 * `pause`, `resume`, `replay`. Each calls the daemon's REST API and prints a table or, with
 * `-o json`, the API's JSON response.
 */
import { existsSync, readFileSync } from 'node:fs';
import { NOTIFY_EVENTS } from '../../contract/manifest/defaults.js';
import { NOTIFICATION_STATUSES, RUN_OUTCOMES } from '../../daemon/store/types.js';
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

/** Calls the API; prints errors; returns the JSON body or null after printing an error. */
async function call(
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
      `error: ${res.status} ${e.code ?? ''}: ${e.message ?? res.statusText}${e.path ? ` (at ${e.path})` : ''}\n`,
    );
    return null;
  }
  return json;
}

type Row = Record<string, unknown>;
const cell = (v: unknown): string =>
  v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(' | ') : String(v);

function table(rows: Row[], columns: string[]): string[] {
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

function print(
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
  'app',
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

const withDuration = (r: Row): Row => ({ ...r, duration: duration(r['duration_ms']) });

/** Splits `<app>.<job>`. */
export function target(text: string): { app: string; job: string } | null {
  const m = /^([a-z][a-z0-9-]{0,62})\.([a-z][a-z0-9-]{0,62})$/.exec(text);
  return m ? { app: m[1] as string, job: m[2] as string } : null;
}

/** `cronix jobs`. */
export async function jobsCommand(o: ClientOptions): Promise<number> {
  const json = await call(o, 'GET', '/api/v1/jobs');
  if (!json) return EXIT.error;
  return print(o, json, json['jobs'] as Row[], [
    'app',
    'job',
    'schedules',
    'timezone',
    'next_fire',
    'paused',
    'last_outcome',
    'active',
    'queued',
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
    const t = target(o.job);
    if (!t) return usage(`--job must look like app.job, found ${JSON.stringify(o.job)}`);
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

/** `cronix runs [--job app.job] [--outcome X] [--limit n]`. */
export async function runsCommand(
  o: ClientOptions & { job?: string; outcome?: string; limit?: string },
): Promise<number> {
  const q = listQuery(o, [['outcome', o.outcome, RUN_OUTCOMES]]);
  if (!q) return EXIT.usage;
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
  return showList(o, '/api/v1/notifications', q, 'notifications', [
    'id',
    'created_at',
    'app',
    'job',
    'event',
    'notifier',
    'count',
    'status',
    'attempts',
    'last_status',
    'last_error',
  ]);
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
    'app',
    'job',
    'trigger',
    'phase',
    'outcome',
    'error',
    'attempts',
    'last_status',
    'output_truncated',
    'scheduled_time',
    'created_at',
    'started_at',
    'ended_at',
    'duration',
  ];
  const width = Math.max(...fields.map((f) => f.length));
  const attempts = ((json['attempt_log'] as Row[] | undefined) ?? []).map((a) => ({
    ...a,
    duration: duration(a['duration_ms']),
  }));
  printLines([
    ...fields.map((f) => `${f.padEnd(width)}  ${cell(run[f])}`),
    '',
    ...(attempts.length === 0
      ? ['no attempts were sent']
      : table(attempts, ['attempt', 'started_at', 'duration', 'status', 'error'])),
  ]);
  return EXIT.ok;
}

/** `cronix start app.job [--at T | --after D]`. */
export async function startCommand(
  text: string,
  o: ClientOptions & { at?: string; after?: string },
): Promise<number> {
  const t = target(text);
  if (!t) {
    process.stderr.write(`error: expected app.job, found ${JSON.stringify(text)}\n`);
    return EXIT.usage;
  }
  if (o.at && o.after) {
    process.stderr.write('error: give --at or --after, not both\n');
    return EXIT.usage;
  }
  let body: Record<string, unknown> = {};
  if (o.at) body = { at: o.at };
  if (o.after) {
    const m = /^(\d+)(s|m|h)?$/.exec(o.after);
    if (!m) {
      process.stderr.write(
        `error: --after: expected a delay like 90s, 5m or 2h, found ${JSON.stringify(o.after)}\n`,
      );
      return EXIT.usage;
    }
    body = {
      after_seconds: Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h'],
    };
  }
  const json = await call(o, 'POST', `/api/v1/jobs/${t.app}/${t.job}/trigger`, body);
  if (!json) return EXIT.error;
  const run = json['run'] as Row;
  return print(
    o,
    json,
    [{ ...run, admission: json['admission'] }],
    ['id', 'app', 'job', 'admission', 'phase', 'outcome', 'scheduled_time'],
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
  const run = json['run'] as Row;
  return print(
    o,
    json,
    [{ ...run, admission: json['admission'] ?? '-' }],
    ['id', 'app', 'job', 'admission', 'phase', 'outcome'],
  );
}

/** `cronix pause|resume app.job`. */
export async function pauseCommand(
  action: 'pause' | 'resume',
  text: string,
  o: ClientOptions,
): Promise<number> {
  const t = target(text);
  if (!t) {
    process.stderr.write(`error: expected app.job, found ${JSON.stringify(text)}\n`);
    return EXIT.usage;
  }
  const json = await call(o, 'POST', `/api/v1/jobs/${t.app}/${t.job}/${action}`, {});
  if (!json) return EXIT.error;
  return print(o, json, [json], ['app', 'job', 'paused']);
}
