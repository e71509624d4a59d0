/**
 * The skip route (SPEC §16 "Calendars"): `POST /api/v1/jobs/{app}/{job}/skip` with
 * `{"next": true}` (the job's next fire) or `{"at": T}` (one fire instant, RFC 3339): when that
 * fire comes it is recorded `skipped` with reason `skip: by <who>`. The leader's (a standby
 * forwards it); 201 for a new skip, 200 when that instant was already skipped (the first skip).
 */
import type { Context, Hono } from 'hono';
import { echo, MAX_ECHO } from '../contract/echo.js';
import { parseInstant, rfc3339Utc } from '../contract/run.js';
import type { DaemonControl } from '../daemon/control.js';
import { SchedulerError } from '../daemon/core.js';
import type { SkipRecord } from '../daemon/store/skip-types.js';
import type { SkipWhat } from '../daemon/verbs.js';
import { actorOf } from './actor.js';
import { BadRequest } from './serialize.js';

/** A skip as the API returns it. */
export function skipJson(s: SkipRecord): Record<string, unknown> {
  return { app: s.app, job: s.job, at: rfc3339Utc(s.at), by: s.by, since: rfc3339Utc(s.since) };
}

async function body(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequest('', 'request body must be JSON: {"next": true} or {"at": "<RFC 3339>"}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new BadRequest('', 'request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** What a request asks to skip. */
export function skipWhatOf(b: Record<string, unknown>): SkipWhat {
  for (const k of Object.keys(b))
    if (k !== 'next' && k !== 'at')
      throw new BadRequest(
        k.slice(0, MAX_ECHO),
        `unknown field ${echo(k)} (expected "next" or "at")`,
      );
  const next = b['next'];
  const at = b['at'];
  if (next !== undefined && at !== undefined)
    throw new BadRequest('', 'give one of "next" and "at", not both');
  if (next !== undefined) {
    if (next !== true)
      throw new BadRequest('next', `"next" must be true, found ${echo(String(next))}`);
    return { next: true };
  }
  if (at === undefined) throw new BadRequest('', 'give "next": true or "at": "<RFC 3339 instant>"');
  const t = typeof at === 'string' ? parseInstant(at) : null;
  if (t === null)
    throw new BadRequest('at', `"at" must be an RFC 3339 instant, found ${echo(String(at))}`);
  return { at: t };
}

/** Registers the skip route on the API. */
export function registerSkips(app: Hono, deps: { scheduler: DaemonControl }): void {
  const { scheduler } = deps;
  app.post('/api/v1/jobs/:app/:job/skip', async (c) => {
    const what = skipWhatOf(await body(c));
    if (!scheduler.skip)
      throw new SchedulerError('not_found', 'this daemon does not support skips');
    const r = await scheduler.skip(c.req.param('app'), c.req.param('job'), what, actorOf(c));
    return c.json({ skip: skipJson(r.skip), created: r.created }, r.created ? 201 : 200);
  });
}
