/**
 * The freeze routes (SPEC §16 "Freeze"), kept in one file so a role table can list them:
 * `GET /api/v1/freezes` (any replica, from the store), `POST /api/v1/freezes` (freeze a scope:
 * every job, an app, or a job) and `POST /api/v1/freezes/unfreeze` (end the freeze of exactly
 * one scope) — both the leader's (a standby forwards them). Also the note a pause takes
 * (`POST /api/v1/jobs/{app}/{job}/pause` with `{"reason"}`; the route itself lives in `api.ts`).
 */
import type { Context, Hono } from 'hono';
import { echo, MAX_ECHO } from '../contract/echo.js';
import { parseInstant, rfc3339Utc } from '../contract/run.js';
import type { DaemonControl } from '../daemon/control.js';
import { SchedulerError } from '../daemon/core.js';
import type { FreezeRecord, FreezeSpec, PauseNote } from '../daemon/store/freeze-types.js';
import { actorOf } from './actor.js';
import { BadRequest } from './serialize.js';

/** Longest freeze or pause reason, characters. */
export const MAX_REASON = 500;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A freeze as the API returns it. */
export function freezeJson(f: FreezeRecord): Record<string, unknown> {
  return {
    app: f.app,
    job: f.job,
    reason: f.reason,
    by: f.by,
    since: rfc3339Utc(f.since),
    until: f.until === null ? null : rfc3339Utc(f.until),
  };
}

/** A pause's note as the API returns it. */
export function pauseNoteJson(n: PauseNote | null): Record<string, unknown> | null {
  if (!n) return null;
  return { reason: n.reason, by: n.by, since: n.since === null ? null : rfc3339Utc(n.since) };
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

function only(b: Record<string, unknown>, fields: readonly string[]): void {
  for (const k of Object.keys(b))
    if (!fields.includes(k))
      throw new BadRequest(
        k.slice(0, MAX_ECHO),
        `unknown field ${echo(k)} (expected ${fields.map((f) => `"${f}"`).join(', ')})`,
      );
}

function name(b: Record<string, unknown>, field: 'app' | 'job'): string | null {
  const v = b[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !NAME.test(v))
    throw new BadRequest(field, `"${field}" must be an app or job name, found ${echo(String(v))}`);
  return v;
}

/** A reason: 1–500 characters, no control characters. */
export function reasonOf(v: unknown, required: boolean): string | null {
  if (v === undefined || v === null) {
    if (required) throw new BadRequest('reason', '"reason" is required (why it is frozen)');
    return null;
  }
  if (typeof v !== 'string' || v.trim() === '' || v.length > MAX_REASON)
    throw new BadRequest('reason', `"reason" must be text of 1 to ${MAX_REASON} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(v))
    throw new BadRequest('reason', '"reason" must not contain control characters');
  return v.trim();
}

/** The freeze a request asks for. */
export function freezeSpecOf(b: Record<string, unknown>, now: number): FreezeSpec {
  only(b, ['app', 'job', 'reason', 'until']);
  const app = name(b, 'app');
  const job = name(b, 'job');
  const reason = reasonOf(b['reason'], true) as string;
  let until: number | null = null;
  if (b['until'] !== undefined && b['until'] !== null) {
    const t = typeof b['until'] === 'string' ? parseInstant(b['until']) : null;
    if (t === null)
      throw new BadRequest(
        'until',
        `"until" must be an RFC 3339 instant, found ${echo(String(b['until']))}`,
      );
    if (t <= now) throw new BadRequest('until', `"until" (${rfc3339Utc(t)}) is not in the future`);
    until = t;
  }
  return { app, job, reason, until };
}

/** The note of `POST …/pause` (`{"reason"}` optional), with who asked. */
export async function pauseNoteOf(c: Context): Promise<{ reason: string | null; by: string }> {
  const b = await body(c);
  only(b, ['reason']);
  return { reason: reasonOf(b['reason'], false), by: actorOf(c) };
}

/** Registers the freeze routes on the API. */
export function registerFreezes(app: Hono, deps: { scheduler: DaemonControl }): void {
  const { scheduler } = deps;
  const verbs = (): Required<Pick<DaemonControl, 'freeze' | 'unfreeze'>> => {
    if (!scheduler.freeze || !scheduler.unfreeze)
      throw new SchedulerError('not_found', 'this daemon does not support freezes');
    return {
      freeze: scheduler.freeze.bind(scheduler),
      unfreeze: scheduler.unfreeze.bind(scheduler),
    };
  };

  app.get('/api/v1/freezes', async (c) => {
    const list = (await scheduler.freezeList?.()) ?? [];
    return c.json({ freezes: list.map(freezeJson) });
  });

  app.post('/api/v1/freezes', async (c) => {
    const spec = freezeSpecOf(await body(c), scheduler.now());
    const f = await verbs().freeze(spec, actorOf(c));
    return c.json({ freeze: freezeJson(f) }, 201);
  });

  app.post('/api/v1/freezes/unfreeze', async (c) => {
    const b = await body(c);
    only(b, ['app', 'job']);
    const f = await verbs().unfreeze(name(b, 'app'), name(b, 'job'), actorOf(c));
    return c.json({ unfrozen: freezeJson(f), by: actorOf(c) });
  });
}
