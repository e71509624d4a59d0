/**
 * `cronix freeze`, `cronix unfreeze`, `cronix freezes` (SPEC §16 "Freeze"): API clients.
 * Exit codes: 0 ok, 1 error (the daemon refused: no such job, not frozen), 2 usage.
 */
import { parseInstant, rfc3339Utc } from '../../contract/run.js';
import { EXIT } from '../output.js';
import { call, jobOf, print, type ClientOptions, type Row } from './client.js';

/** The scope flags: `--app A`, `--job J` (with --app) or `--job app/job`. */
export interface ScopeFlags {
  app?: string;
  job?: string;
}

const COLUMNS = ['scope', 'reason', 'by', 'since', 'until'];

function usage(msg: string): number {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  return EXIT.usage;
}

/** The scope as API fields; a string is the usage error ('' when already reported). */
function scopeOf(f: ScopeFlags): { app?: string; job?: string } | string {
  if (f.job !== undefined && f.app === undefined) {
    const t = jobOf('--job', f.job);
    return t ?? '';
  }
  return { ...(f.app !== undefined ? { app: f.app } : {}), ...(f.job ? { job: f.job } : {}) };
}

const scopeText = (r: Row): string => {
  const app = r['app'] as string | null;
  const job = r['job'] as string | null;
  if (app === null) return job === null ? 'every job' : `*/${job}`;
  return job === null ? `${app}/*` : `${app}/${job}`;
};

/** `cronix freeze [--app A] [--job J] --reason TEXT [--until T]`. */
export async function freezeCommand(
  f: ScopeFlags & { reason?: string; until?: string },
  o: ClientOptions,
): Promise<number> {
  const scope = scopeOf(f);
  if (typeof scope === 'string') return usage(scope);
  if (!f.reason?.trim()) return usage('--reason is required (why it is frozen)');
  let until: string | undefined;
  if (f.until !== undefined) {
    const at = parseInstant(f.until);
    if (at === null)
      return usage(
        `--until: expected an RFC 3339 instant or Unix seconds, found ${JSON.stringify(f.until.slice(0, 80))}`,
      );
    until = rfc3339Utc(at);
  }
  const json = await call(o, 'POST', '/api/v1/freezes', {
    ...scope,
    reason: f.reason,
    ...(until ? { until } : {}),
  });
  if (!json) return EXIT.error;
  const fr = json['freeze'] as Row;
  return print(o, json, [{ ...fr, scope: scopeText(fr) }], COLUMNS);
}

/** `cronix unfreeze [--app A] [--job J]`: ends the freeze of exactly that scope. */
export async function unfreezeCommand(f: ScopeFlags, o: ClientOptions): Promise<number> {
  const scope = scopeOf(f);
  if (typeof scope === 'string') return usage(scope);
  const json = await call(o, 'POST', '/api/v1/freezes/unfreeze', scope);
  if (!json) return EXIT.error;
  const fr = json['unfrozen'] as Row;
  return print(
    o,
    json,
    [{ ...fr, scope: scopeText(fr), unfrozen_by: json['by'] }],
    ['scope', 'reason', 'by', 'unfrozen_by'],
  );
}

/** `cronix freezes`: the freezes in force. */
export async function freezesCommand(o: ClientOptions): Promise<number> {
  const json = await call(o, 'GET', '/api/v1/freezes');
  if (!json) return EXIT.error;
  const rows = (json['freezes'] as Row[]).map((r) => ({ ...r, scope: scopeText(r) }));
  return print(o, json, rows, COLUMNS);
}
