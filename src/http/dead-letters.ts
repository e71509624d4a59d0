/**
 * The dead-letter routes (SPEC §16): the view (runs that ended failed and whose run key has not
 * succeeded since, with counts per job), bulk replay by job, outcome and time range (with a dry
 * run, at most `max` dead letters per request, each replayed through its job's lane like any
 * replay), and dismissal with a note (who, why).
 */
import type { Context, Hono } from 'hono';
import { echo, echoValue, MAX_ECHO } from '../contract/echo.js';
import { parseInstant } from '../contract/run.js';
import type { DaemonControl } from '../daemon/control.js';
import { FAILED_OUTCOMES, parseOutcomes } from '../daemon/store/outcomes.js';
import type { DeadLetterFilter, RunRecord, Store } from '../daemon/store/types.js';
import { actorOf } from './actor.js';
import { BadRequest, runJson } from './serialize.js';

/** Most dead letters one bulk replay replays. */
export const MAX_REPLAY = 1000;
/** Default of `max`. */
export const DEFAULT_REPLAY = 10;
const MAX_NOTE = 500;

function instant(field: string, v: unknown): number {
  const at = typeof v === 'string' ? parseInstant(v) : null;
  if (at === null)
    throw new BadRequest(
      field,
      `expected an RFC 3339 instant such as "2026-03-29T01:00:00Z" (or Unix seconds), found ${echoValue(v)}`,
    );
  return at;
}

/** A dead-letter filter from query parameters or a JSON body (strings). */
function filterOf(q: Record<string, unknown>, allowed: readonly string[]): DeadLetterFilter {
  for (const k of Object.keys(q))
    if (!allowed.includes(k))
      throw new BadRequest(
        k.slice(0, MAX_ECHO),
        `unknown field ${echo(k)} (expected ${allowed.join(', ')})`,
      );
  const f: DeadLetterFilter = {};
  for (const k of ['app', 'job'] as const) {
    const v = q[k];
    if (v === undefined || v === '') continue;
    if (typeof v !== 'string') throw new BadRequest(k, `expected a name, found ${echoValue(v)}`);
    f[k] = v;
  }
  if (q['outcome'] !== undefined && q['outcome'] !== '') {
    const text = q['outcome'];
    const parsed = typeof text === 'string' ? parseOutcomes(text) : null;
    if (!parsed || !parsed.ok || parsed.outcomes.some((o) => !FAILED_OUTCOMES.includes(o)))
      throw new BadRequest(
        'outcome',
        `expected failed outcomes (${FAILED_OUTCOMES.join(', ')}, or failed), found ${echoValue(text)}`,
      );
    f.outcomes = parsed.outcomes;
  }
  if (q['from'] !== undefined) f.from = instant('from', q['from']);
  if (q['to'] !== undefined) f.to = instant('to', q['to']);
  return f;
}

function limitOf(field: string, v: unknown, max: number, dflt: number): number {
  if (v === undefined) return dflt;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max)
    throw new BadRequest(field, `expected an integer from 1 to ${max}, found ${echoValue(v)}`);
  return n;
}

async function body(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequest('', 'request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new BadRequest('', 'request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** Registers the dead-letter routes on the API. */
export function registerDeadLetters(
  app: Hono,
  deps: { scheduler: DaemonControl; store: Store },
): void {
  const { scheduler, store } = deps;

  app.get('/api/v1/dead-letters', async (c) => {
    const q = c.req.query();
    const filter = filterOf(q, ['app', 'job', 'outcome', 'from', 'to', 'limit', 'before']);
    filter.limit = limitOf('limit', c.req.query('limit'), 1000, 100);
    const before = c.req.query('before');
    if (before !== undefined) {
      const run = await store.getRun(before);
      if (!run) throw new BadRequest('before', `expected the id of a run, found ${echo(before)}`);
      filter.beforeSeq = run.seq;
    }
    const [runs, counts] = await Promise.all([store.deadLetters(filter), store.deadLetterCounts()]);
    return c.json({ dead_letters: runs.map((r) => runJson(r)), counts });
  });

  app.post('/api/v1/dead-letters/replay', async (c) => {
    const b = await body(c);
    const filter = filterOf(b, ['app', 'job', 'outcome', 'from', 'to', 'max', 'dry_run']);
    filter.limit = limitOf('max', b['max'], MAX_REPLAY, DEFAULT_REPLAY);
    if (b['dry_run'] !== undefined && typeof b['dry_run'] !== 'boolean')
      throw new BadRequest('dry_run', `expected true or false, found ${echoValue(b['dry_run'])}`);
    // oldest first: a backlog is replayed in the order it failed
    const runs: RunRecord[] = (await store.deadLetters(filter)).reverse();
    if (b['dry_run'] === true)
      return c.json({ dry_run: true, dead_letters: runs.map((r) => runJson(r)) });
    const replayed: Record<string, unknown>[] = [];
    for (const run of runs) {
      try {
        const r = await scheduler.replay(run.id);
        replayed.push({ dead_letter: run.id, run: runJson(r.run), admission: r.admission });
      } catch (err) {
        replayed.push({ dead_letter: run.id, error: (err as Error).message });
      }
    }
    return c.json({ replayed }, 202);
  });

  app.post('/api/v1/dead-letters/dismiss', async (c) => {
    const b = await body(c);
    for (const k of Object.keys(b))
      if (k !== 'run_ids' && k !== 'note')
        throw new BadRequest(
          k.slice(0, MAX_ECHO),
          `unknown field ${echo(k)} (expected run_ids, note)`,
        );
    const ids = b['run_ids'];
    if (
      !Array.isArray(ids) ||
      ids.length < 1 ||
      ids.length > 1000 ||
      !ids.every((i) => typeof i === 'string')
    )
      throw new BadRequest(
        'run_ids',
        `expected a list of 1 to 1000 run ids, found ${echoValue(ids)}`,
      );
    const note = b['note'];
    if (typeof note !== 'string' || note.trim() === '' || note.length > MAX_NOTE)
      throw new BadRequest(
        'note',
        `expected why, in 1 to ${MAX_NOTE} characters, found ${echoValue(note)}`,
      );
    const by = actorOf(c);
    const dismissed = await store.dismissDeadLetters(
      ids as string[],
      note.trim(),
      by,
      scheduler.now(),
    );
    return c.json({ dismissed, by, note: note.trim() });
  });
}
