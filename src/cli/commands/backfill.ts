/**
 * `cronix backfill app/job --from T1 --to T2 […]`, `cronix backfills [id]` and
 * `cronix cancel-backfill <id>` (SPEC §16): API clients, like the other daemon commands. Exit
 * codes: 0 ok (with `--wait`: the backfill ended `done`), 1 error (or with `--wait` it ended
 * `stopped` or `cancelled`), 2 usage.
 */
import { parseInstant, rfc3339Utc } from '../../contract/run.js';
import { EXIT, printJson, printLines } from '../output.js';
import { call, jobOf, named, print, table, type ClientOptions, type Row } from './client.js';

/** The choices of `cronix backfill`, as given on the command line. */
export interface BackfillFlags {
  from?: string;
  to?: string;
  onlyMissing?: boolean;
  parallel?: string;
  stopAfterFailures?: string;
  dryRun?: boolean;
  /** Follow the backfill's progress until it ends. */
  wait?: boolean;
}

const COLUMNS = ['id', 'job', 'state', 'progress', 'failed', 'parallel', 'created_by', 'reason'];

function usage(msg: string): number {
  process.stderr.write(`error: ${msg}\n`);
  return EXIT.usage;
}

function instantFlag(name: string, text: string | undefined): string | { error: string } {
  if (text === undefined)
    return { error: `--${name} is required (an RFC 3339 instant or Unix seconds)` };
  const at = parseInstant(text);
  if (at === null)
    return {
      error: `--${name}: expected an RFC 3339 instant (2026-03-01T00:00:00Z) or Unix seconds, found ${JSON.stringify(text.slice(0, 80))}`,
    };
  return rfc3339Utc(at);
}

function intFlag(
  name: string,
  text: string | undefined,
  max: number,
): number | undefined | { error: string } {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > max)
    return {
      error: `--${name}: expected an integer from 1 to ${max}, found ${JSON.stringify(text.slice(0, 80))}`,
    };
  return n;
}

/** One backfill as a table row: `job` as app/job, progress as `done/total`. */
export function backfillRow(b: Row): Row {
  const c = (b['counts'] ?? {}) as Record<string, number>;
  const done = (c['succeeded'] ?? 0) + (c['failed'] ?? 0) + (c['other'] ?? 0);
  return { ...named(b), progress: `${done}/${String(b['total'])}`, failed: c['failed'] ?? 0 };
}

/** `cronix backfill app/job --from T1 --to T2 [--only-missing] [--parallel N] [--stop-after-failures K] [--dry-run] [--wait]`. */
export async function backfillCommand(
  text: string,
  f: BackfillFlags,
  o: ClientOptions,
): Promise<number> {
  const t = jobOf('the job', text);
  if (!t) return EXIT.usage;
  const from = instantFlag('from', f.from);
  if (typeof from !== 'string') return usage(from.error);
  const to = instantFlag('to', f.to);
  if (typeof to !== 'string') return usage(to.error);
  const parallel = intFlag('parallel', f.parallel, 1024);
  if (typeof parallel === 'object') return usage(parallel.error);
  const gate = intFlag('stop-after-failures', f.stopAfterFailures, 1_000_000);
  if (typeof gate === 'object') return usage(gate.error);
  if (f.dryRun && f.wait) return usage('--wait has nothing to wait for with --dry-run');
  const body = {
    from,
    to,
    ...(f.onlyMissing ? { only_missing: true } : {}),
    ...(parallel !== undefined ? { parallel } : {}),
    ...(gate !== undefined ? { stop_after_failures: gate } : {}),
    ...(f.dryRun ? { dry_run: true } : {}),
  };
  const json = await call(o, 'POST', `/api/v1/jobs/${t.app}/${t.job}/backfills`, body);
  if (!json) return EXIT.error;
  if (f.dryRun) {
    if (o.output === 'json') printJson(json);
    else {
      const runs = json['runs'] as Row[];
      const left = json['left_out'] as Record<string, number>;
      printLines([
        ...runs.map((r) => String(r['run_key'])),
        `${runs.length} run(s) of ${String(json['instants'])} instant(s); left out: ${left['succeeded']} succeeded, ${left['ran']} already ran`,
      ]);
    }
    return EXIT.ok;
  }
  const b = json['backfill'] as Row;
  if (!f.wait) return print(o, json, [backfillRow(b)], COLUMNS);
  return follow(String(b['id']), o);
}

/** Polls a backfill until it ends, printing its progress when it changes (table output). */
async function follow(id: string, o: ClientOptions): Promise<number> {
  let last = '';
  for (;;) {
    const b = await call(o, 'GET', `/api/v1/backfills/${encodeURIComponent(id)}`);
    if (!b) return EXIT.error;
    const { items: _items, ...shown } = b;
    const row = backfillRow(shown);
    const line = `${String(row['state'])} ${String(row['progress'])} failed ${String(row['failed'])}`;
    if (o.output !== 'json' && line !== last) printLines([`${rfc3339Utc(Date.now())} ${line}`]);
    last = line;
    if (b['state'] !== 'running' && (b['counts'] as Record<string, number>)['active'] === 0) {
      if (o.output === 'json') printJson({ backfill: shown });
      else if (b['reason']) printLines([String(b['reason'])]);
      return b['state'] === 'done' ? EXIT.ok : EXIT.error;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** `cronix backfills [id] [--job app/job] [--state S]`: the list, or one with its plan. */
export async function backfillsCommand(
  id: string | undefined,
  f: { job?: string; state?: string; limit?: string },
  o: ClientOptions,
): Promise<number> {
  if (id !== undefined) {
    const b = await call(o, 'GET', `/api/v1/backfills/${encodeURIComponent(id)}`);
    if (!b) return EXIT.error;
    if (o.output === 'json') {
      printJson(b);
      return EXIT.ok;
    }
    const items = (b['items'] ?? []) as Row[];
    printLines([
      ...table([backfillRow(b)], COLUMNS),
      '',
      ...table(items, ['position', 'scheduled_time', 'run_key', 'run_id', 'phase', 'outcome']),
    ]);
    return EXIT.ok;
  }
  const q = new URLSearchParams();
  if (f.job) {
    const t = jobOf('--job', f.job);
    if (!t) return EXIT.usage;
    q.set('app', t.app);
    q.set('job', t.job);
  }
  if (f.state) q.set('state', f.state);
  if (f.limit) q.set('limit', f.limit);
  const json = await call(o, 'GET', `/api/v1/backfills${q.size ? `?${q}` : ''}`);
  if (!json) return EXIT.error;
  return print(o, json, (json['backfills'] as Row[]).map(backfillRow), COLUMNS);
}

/** `cronix cancel-backfill <id>`. */
export async function cancelBackfillCommand(id: string, o: ClientOptions): Promise<number> {
  const json = await call(o, 'POST', `/api/v1/backfills/${encodeURIComponent(id)}/cancel`, {});
  if (!json) return EXIT.error;
  return print(o, json, [backfillRow(json['backfill'] as Row)], COLUMNS);
}
