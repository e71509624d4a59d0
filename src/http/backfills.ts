/**
 * The backfill routes (SPEC §16): start one (or its dry run) for a job, list them, show one with
 * its plan, cancel one. A dry run is answered by any replica from the store; starting and
 * cancelling are the leader's (a standby forwards them, `DaemonVerbs`).
 */
import type { Context, Hono } from 'hono';
import { echo, echoValue, MAX_ECHO } from '../contract/echo.js';
import { parseInstant, rfc3339Utc } from '../contract/run.js';
import { planBackfill } from '../daemon/backfill/plan.js';
import type { DaemonControl } from '../daemon/control.js';
import { SchedulerError } from '../daemon/core.js';
import { jobKey } from '../daemon/registry.js';
import {
  BACKFILL_STATES,
  type BackfillFilter,
  type BackfillItem,
  type BackfillRecord,
  type BackfillSpec,
  type BackfillState,
  type Store,
} from '../daemon/store/types.js';
import { actorOf } from './actor.js';
import { BadRequest } from './serialize.js';

/** Most runs of one backfill at once. */
export const MAX_BACKFILL_PARALLEL = 1024;

const time = (ms: number | null): string | null => (ms === null ? null : rfc3339Utc(ms));

/** A backfill as the API returns it. */
export function backfillJson(b: BackfillRecord): Record<string, unknown> {
  return {
    id: b.id,
    app: b.app,
    job: b.job,
    from: time(b.from),
    to: time(b.to),
    only_missing: b.onlyMissing,
    parallel: b.parallel,
    stop_after_failures: b.stopAfterFailures,
    state: b.state,
    total: b.total,
    counts: b.counts,
    created_by: b.createdBy,
    created_at: time(b.createdAt),
    ended_at: time(b.endedAt),
    reason: b.reason,
  };
}

function itemJson(i: BackfillItem): Record<string, unknown> {
  return {
    position: i.position,
    scheduled_time: time(i.scheduledTime),
    schedule_index: i.scheduleIndex,
    run_key: i.runKey,
    run_id: i.runId,
    phase: i.phase,
    outcome: i.outcome,
  };
}

async function body(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') throw new BadRequest('', 'expected a JSON object with "from" and "to"');
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

const FIELDS = ['from', 'to', 'only_missing', 'parallel', 'stop_after_failures', 'dry_run'];

function instant(b: Record<string, unknown>, field: string): number {
  const v = b[field];
  const at = typeof v === 'string' && /^\d{4}-\d{2}-\d{2}[Tt ]/.test(v) ? parseInstant(v) : null;
  if (at === null)
    throw new BadRequest(
      field,
      `expected an RFC 3339 instant such as "2026-03-29T01:00:00Z", found ${echoValue(v)}`,
    );
  return at;
}

function integer(b: Record<string, unknown>, field: string, max: number, dflt: number | null) {
  const v = b[field];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max)
    throw new BadRequest(field, `expected an integer from 1 to ${max}, found ${echoValue(v)}`);
  return v;
}

function flag(b: Record<string, unknown>, field: string): boolean {
  const v = b[field];
  if (v === undefined) return false;
  if (typeof v !== 'boolean')
    throw new BadRequest(field, `expected true or false, found ${echoValue(v)}`);
  return v;
}

/** A backfill request's body as a spec (and whether it is a dry run); bad input names its field. */
export function backfillRequest(
  app: string,
  job: string,
  b: Record<string, unknown>,
): { spec: BackfillSpec; dryRun: boolean } {
  for (const k of Object.keys(b))
    if (!FIELDS.includes(k))
      throw new BadRequest(
        k.slice(0, MAX_ECHO),
        `unknown field ${echo(k)} (expected ${FIELDS.join(', ')})`,
      );
  const from = instant(b, 'from');
  const to = instant(b, 'to');
  if (to <= from)
    throw new BadRequest(
      'to',
      `"to" (${rfc3339Utc(to)}) must be after "from" (${rfc3339Utc(from)})`,
    );
  return {
    spec: {
      app,
      job,
      from,
      to,
      onlyMissing: flag(b, 'only_missing'),
      parallel: integer(b, 'parallel', MAX_BACKFILL_PARALLEL, 1) as number,
      stopAfterFailures: integer(b, 'stop_after_failures', 1_000_000, null),
    },
    dryRun: flag(b, 'dry_run'),
  };
}

function filterOf(q: Record<string, string>): BackfillFilter {
  const filter: BackfillFilter = {};
  for (const k of Object.keys(q))
    if (!['app', 'job', 'state', 'limit'].includes(k))
      throw new BadRequest(k.slice(0, MAX_ECHO), `unknown query parameter ${echo(k)}`);
  if (q['app']) filter.app = q['app'];
  if (q['job']) filter.job = q['job'];
  if (q['state'] !== undefined) {
    if (!(BACKFILL_STATES as readonly string[]).includes(q['state']))
      throw new BadRequest(
        'state',
        `expected one of ${BACKFILL_STATES.join(', ')}, found ${echo(q['state'])}`,
      );
    filter.state = q['state'] as BackfillState;
  }
  if (q['limit'] !== undefined) {
    const n = Number(q['limit']);
    if (!/^\d+$/.test(q['limit']) || n < 1 || n > 1000)
      throw new BadRequest(
        'limit',
        `expected an integer from 1 to 1000, found ${echo(q['limit'])}`,
      );
    filter.limit = n;
  }
  return filter;
}

/** Registers the backfill routes on the API. */
export function registerBackfills(
  app: Hono,
  deps: { scheduler: DaemonControl; store: Store },
): void {
  const { scheduler, store } = deps;

  app.post('/api/v1/jobs/:app/:job/backfills', async (c) => {
    const { spec, dryRun } = backfillRequest(c.req.param('app'), c.req.param('job'), await body(c));
    const key = jobKey(spec.app, spec.job);
    const job = scheduler.jobs().get(key);
    if (!job) throw new SchedulerError('not_found', `no job ${echo(key)}`);
    if (dryRun) {
      const plan = await planBackfill(store, job, spec);
      if (!plan.ok) throw new SchedulerError('invalid_request', plan.message);
      return c.json({
        dry_run: true,
        app: spec.app,
        job: spec.job,
        instants: plan.instants,
        left_out: plan.leftOut,
        runs: plan.items.map((i) => ({
          scheduled_time: rfc3339Utc(i.scheduledTime),
          schedule_index: i.scheduleIndex,
          run_key: i.runKey,
        })),
      });
    }
    const b = await scheduler.backfill(spec, actorOf(c));
    return c.json({ backfill: backfillJson(b) }, 202);
  });

  app.get('/api/v1/backfills', async (c) => {
    const list = await store.listBackfills(filterOf(c.req.query()));
    return c.json({ backfills: list.map(backfillJson) });
  });

  app.get('/api/v1/backfills/:id', async (c) => {
    const b = await store.getBackfill(c.req.param('id'));
    if (!b) throw new SchedulerError('not_found', `no backfill ${echo(c.req.param('id'))}`);
    const items = await store.backfillItems(b.id);
    return c.json({ ...backfillJson(b), items: items.map(itemJson) });
  });

  app.post('/api/v1/backfills/:id/cancel', async (c) => {
    const b = await scheduler.cancelBackfill(c.req.param('id'), actorOf(c));
    return c.json({ backfill: backfillJson(b) });
  });
}
