/**
 * `cronix dead-letters`, `cronix replay-dead-letters`, `cronix dismiss-dead-letters` (SPEC
 * §16): API clients. Exit codes: 0 ok, 1 error (for a replay: one of them could not be
 * replayed), 2 usage.
 */
import { parseInstant, rfc3339Utc } from '../../contract/run.js';
import { EXIT, printJson, printLines } from '../output.js';
import { call, jobOf, named, print, type ClientOptions, type Row } from './client.js';

/** The filter flags shared by the view and the bulk replay. */
export interface DeadLetterFlags {
  app?: string;
  job?: string;
  outcome?: string;
  from?: string;
  to?: string;
}

const COLUMNS = ['id', 'job', 'trigger', 'outcome', 'attempts', 'scheduled_time', 'error'];

/** The filter as API fields; a string is the usage error. */
function filterOf(f: DeadLetterFlags): Record<string, string> | string {
  const out: Record<string, string> = {};
  if (f.app !== undefined) out['app'] = f.app;
  if (f.job) {
    const t = jobOf('--job', f.job);
    if (!t) return '';
    if (f.app !== undefined && f.app !== t.app)
      return `--job ${JSON.stringify(f.job.slice(0, 80))} is not in --app ${JSON.stringify(f.app.slice(0, 80))}; give one of them, or a job of that app`;
    out['app'] = t.app;
    out['job'] = t.job;
  }
  if (f.outcome) out['outcome'] = f.outcome;
  for (const k of ['from', 'to'] as const) {
    const v = f[k];
    if (v === undefined) continue;
    const at = parseInstant(v);
    if (at === null)
      return `--${k}: expected an RFC 3339 instant or Unix seconds, found ${JSON.stringify(v.slice(0, 80))}`;
    out[k] = rfc3339Utc(at);
  }
  return out;
}

function usage(msg: string): number {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  return EXIT.usage;
}

/** `cronix dead-letters [--job app/job] [--outcome O] [--from T] [--to T] [--limit N]`. */
export async function deadLettersCommand(
  f: DeadLetterFlags & { limit?: string },
  o: ClientOptions,
): Promise<number> {
  const filter = filterOf(f);
  if (typeof filter === 'string') return usage(filter);
  const q = new URLSearchParams(filter);
  if (f.limit) q.set('limit', f.limit);
  const json = await call(o, 'GET', `/api/v1/dead-letters${q.size ? `?${q}` : ''}`);
  if (!json) return EXIT.error;
  if (o.output === 'json') {
    printJson(json);
    return EXIT.ok;
  }
  const counts = (json['counts'] as Row[]).map(
    (c) => `${String(c['app'])}/${String(c['job'])}: ${String(c['count'])}`,
  );
  print(o, json, (json['dead_letters'] as Row[]).map(named), COLUMNS);
  printLines([
    '',
    counts.length ? `dead letters per job: ${counts.join(', ')}` : 'no dead letters',
  ]);
  return EXIT.ok;
}

/** `cronix replay-dead-letters [filter] [--max N] [--dry-run]`. */
export async function replayDeadLettersCommand(
  f: DeadLetterFlags & { max?: string; dryRun?: boolean },
  o: ClientOptions,
): Promise<number> {
  const filter = filterOf(f);
  if (typeof filter === 'string') return usage(filter);
  let max: number | undefined;
  if (f.max !== undefined) {
    max = Number(f.max);
    if (!/^\d+$/.test(f.max) || max < 1 || max > 1000)
      return usage(
        `--max: expected an integer from 1 to 1000, found ${JSON.stringify(f.max.slice(0, 80))}`,
      );
  }
  const json = await call(o, 'POST', '/api/v1/dead-letters/replay', {
    ...filter,
    ...(max !== undefined ? { max } : {}),
    ...(f.dryRun ? { dry_run: true } : {}),
  });
  if (!json) return EXIT.error;
  if (f.dryRun) return print(o, json, (json['dead_letters'] as Row[]).map(named), COLUMNS);
  const rows = (json['replayed'] as Row[]).map((r) => {
    const run = (r['run'] ?? {}) as Row;
    return {
      dead_letter: r['dead_letter'],
      run: run['id'] ?? null,
      admission: r['admission'] ?? null,
      error: r['error'] ?? null,
    };
  });
  print(o, json, rows, ['dead_letter', 'run', 'admission', 'error']);
  return rows.some((r) => r.error !== null) ? EXIT.error : EXIT.ok;
}

/** `cronix dismiss-dead-letters <run-id…> --note TEXT`. */
export async function dismissDeadLettersCommand(
  ids: string[],
  f: { note?: string },
  o: ClientOptions,
): Promise<number> {
  if (!f.note || f.note.trim() === '')
    return usage('--note is required: say why they are dismissed');
  const json = await call(o, 'POST', '/api/v1/dead-letters/dismiss', {
    run_ids: ids,
    note: f.note,
  });
  if (!json) return EXIT.error;
  const dismissed = json['dismissed'] as string[];
  if (o.output === 'json') printJson(json);
  else
    printLines([
      ...dismissed.map((id) => `dismissed ${id}`),
      ...ids.filter((id) => !dismissed.includes(id)).map((id) => `not a dead letter: ${id}`),
    ]);
  return EXIT.ok;
}
