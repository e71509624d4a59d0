/**
 * `cronix services [start|stop|restart <app/service>] [--instance i]` (SPEC §17): without an
 * action, every service with its instances (state, pid, uptime, restarts, last exit); with one,
 * the action's result per instance (`skipped` for a start of a running instance). And
 * `cronix logs <app/service> [--instance i] [-f]`: the output of an instance's current start,
 * followed across its restarts with `-f`. `-o json` prints the API's answer. Exit 0, 1 for an
 * API error or an unreachable daemon, 2 for bad arguments.
 */
import { parseJobName } from '../../contract/run.js';
import { EXIT, printJson, printLines } from '../output.js';
import { endpoint, token, type ClientOptions } from './client.js';
import { logsCommand } from './logs.js';

type Row = Record<string, unknown>;

async function call(
  o: Pick<ClientOptions, 'url' | 'tokenFile'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<Row | null> {
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
      signal: AbortSignal.timeout(60_000),
    });
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error) : null;
    process.stderr.write(
      `error: cannot reach the daemon at ${endpoint(o)}: ${cause?.message ?? (err as Error).message} (is "cronix serve" running? set --url or CRONIX_URL)\n`,
    );
    return null;
  }
  const json = (await res.json().catch(() => ({}))) as Row;
  if (!res.ok) {
    const e = (json['error'] ?? {}) as { code?: string; message?: string; path?: string };
    process.stderr.write(
      `error: ${res.status} ${e.code ?? ''}: ${e.path ? `${e.path}: ` : ''}${e.message ?? res.statusText}\n`,
    );
    return null;
  }
  return json;
}

function table(rows: Row[], columns: string[]): string[] {
  const cell = (v: unknown): string => (v === null || v === undefined ? '-' : String(v));
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

/** `app/service`, or null after a usage error. */
function serviceOf(text: string | undefined): { app: string; service: string } | null {
  const t = text === undefined ? null : parseJobName(text);
  if (!t)
    process.stderr.write(
      `error: expected a service named app/service (or app.service), found ${JSON.stringify(text ?? '')}\n`,
    );
  return t && { app: t.app, service: t.job };
}

/** An `--instance` value, undefined when absent, or null after a usage error. */
function instanceOf(text: string | undefined): number | undefined | null {
  if (text === undefined) return undefined;
  if (/^\d{1,2}$/.test(text)) return Number(text);
  process.stderr.write(
    `error: --instance expects an instance index (0..63), found ${JSON.stringify(text)}\n`,
  );
  return null;
}

const path = (s: { app: string; service: string }): string =>
  `/api/v1/services/${encodeURIComponent(s.app)}/${encodeURIComponent(s.service)}`;

/** `cronix services [action target]`. */
export async function servicesCommand(
  action: string | undefined,
  target: string | undefined,
  o: ClientOptions & { instance?: string },
): Promise<number> {
  const instance = instanceOf(o.instance);
  if (instance === null) return EXIT.usage;
  if (action === undefined) {
    const json = await call(o, 'GET', '/api/v1/services');
    if (!json) return EXIT.error;
    if (o.output === 'json') printJson(json);
    else {
      const rows: Row[] = [];
      for (const s of (json['services'] as Row[] | undefined) ?? [])
        for (const i of (s['instance_states'] as Row[] | undefined) ?? []) {
          const last = i['last_exit'] as Row | null;
          rows.push({
            service: `${String(s['app'])}/${String(s['service'])}`,
            instance: i['instance'],
            state: `${String(i['state'])}${i['crash_loop'] ? ' (crash loop)' : ''}`,
            pid: i['pid'],
            uptime: i['uptime_seconds'] === null ? null : `${String(i['uptime_seconds'])}s`,
            restarts: i['restarts'],
            last_exit: last ? `${String(last['outcome'])}: ${String(last['error'] ?? '')}` : null,
            run: i['run_id'],
          });
        }
      printLines(
        rows.length === 0
          ? ['no services']
          : table(rows, [
              'service',
              'instance',
              'state',
              'pid',
              'uptime',
              'restarts',
              'last_exit',
              'run',
            ]),
      );
    }
    return EXIT.ok;
  }
  if (action !== 'start' && action !== 'stop' && action !== 'restart') {
    process.stderr.write(
      `error: expected start, stop or restart (or nothing, to list), found ${JSON.stringify(action)}\n`,
    );
    return EXIT.usage;
  }
  const s = serviceOf(target);
  if (!s) return EXIT.usage;
  const json = await call(
    o,
    'POST',
    `${path(s)}/${action}`,
    instance === undefined ? {} : { instance },
  );
  if (!json) return EXIT.error;
  if (o.output === 'json') printJson(json);
  else
    printLines(
      ((json['results'] as Row[] | undefined) ?? []).map(
        (r) => `${s.app}/${s.service} instance ${String(r['instance'])}: ${String(r['result'])}`,
      ),
    );
  return EXIT.ok;
}

/** The run id of an instance's current (or last) start, or null. */
async function runOfInstance(
  o: Pick<ClientOptions, 'url' | 'tokenFile'>,
  s: { app: string; service: string },
  instance: number,
): Promise<string | null | 'error'> {
  const json = await call(o, 'GET', path(s));
  if (!json) return 'error';
  const states = (json['instance_states'] as Row[] | undefined) ?? [];
  const found = states.find((i) => i['instance'] === instance);
  if (!found) {
    process.stderr.write(
      `error: service ${s.app}/${s.service} has no instance ${instance} (it has ${states.length})\n`,
    );
    return 'error';
  }
  return typeof found['run_id'] === 'string' ? found['run_id'] : null;
}

/**
 * `cronix logs <app/service> [--instance i] [-f]`: the output of the instance's current start;
 * with `-f`, followed start after start (a line on stderr says when a new one begins) until
 * interrupted.
 */
export async function serviceLogsCommand(
  target: string,
  o: Pick<ClientOptions, 'url' | 'tokenFile'> & {
    follow: boolean;
    raw?: boolean;
    instance?: string;
  },
): Promise<number> {
  const s = serviceOf(target);
  const instance = instanceOf(o.instance) ?? 0;
  if (!s || instance === null) return EXIT.usage;
  let previous: string | null = null;
  for (;;) {
    const run = await runOfInstance(o, s, instance);
    if (run === 'error') return EXIT.error;
    if (run === null || run === previous) {
      if (!o.follow) {
        process.stderr.write(
          `error: instance ${instance} of ${s.app}/${s.service} has not started yet\n`,
        );
        return EXIT.error;
      }
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    if (previous !== null)
      process.stderr.write(`--- cronix: instance ${instance} started again (run ${run}) ---\n`);
    const code = await logsCommand(run, { ...o, follow: o.follow });
    if (!o.follow || code !== EXIT.ok) return code;
    previous = run;
  }
}
