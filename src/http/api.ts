/**
 * The daemon's REST API (SPEC §7) on Hono: JSON under `/api/v1`, bearer-token
 * auth for mutations, `/healthz`, `/metrics`, `/openapi.json`. Handlers only
 * translate HTTP to scheduler calls; the logic lives in `src/daemon`.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { parseInstant } from '../contract/run.js';
import { SchedulerError, type Scheduler } from '../daemon/scheduler.js';
import {
  RUN_OUTCOMES,
  RUN_PHASES,
  type RunFilter,
  type RunOutcome,
  type RunPhase,
  type Store,
} from '../daemon/store/types.js';
import { OPENAPI } from './openapi.js';
import { errorJson, runJson } from './serialize.js';

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 64 * 1024;

const OUTCOMES = RUN_OUTCOMES;
const PHASES = RUN_PHASES;

/** What the API needs. */
export interface ApiDeps {
  scheduler: Scheduler;
  store: Store;
  /** Bearer token for mutations; null = no auth (loopback only, `--no-auth`). */
  token: string | null;
  /** Optional extra routes (the web UI). */
  extend?: (app: Hono) => void;
}

class BadRequest extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1] as string);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest('', 'request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequest('', 'request body must be a JSON object');
  return body as Record<string, unknown>;
}

function triggerWhen(body: Record<string, unknown>): { at?: number; afterSeconds?: number } {
  for (const k of Object.keys(body)) {
    if (k !== 'at' && k !== 'after_seconds')
      throw new BadRequest(k, `unknown field "${k}" (expected "at" or "after_seconds")`);
  }
  if (body['at'] !== undefined && body['after_seconds'] !== undefined)
    throw new BadRequest('', 'give "at" or "after_seconds", not both');
  if (body['at'] !== undefined) {
    const text = body['at'];
    const at =
      typeof text === 'string' && /^\d{4}-\d{2}-\d{2}[Tt ]/.test(text) ? parseInstant(text) : null;
    if (at === null) {
      throw new BadRequest(
        'at',
        `expected an RFC 3339 instant such as "2026-03-29T01:00:00Z", found ${JSON.stringify(body['at'])}`,
      );
    }
    return { at };
  }
  if (body['after_seconds'] !== undefined) {
    const n = body['after_seconds'];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 366 * 86400) {
      throw new BadRequest(
        'after_seconds',
        `expected an integer number of seconds from 0 to 31622400, found ${JSON.stringify(n)}`,
      );
    }
    return { afterSeconds: n };
  }
  return {};
}

async function runFilter(c: Context, store: Store): Promise<RunFilter> {
  const q = c.req.query();
  const filter: RunFilter = {};
  for (const k of Object.keys(q)) {
    if (!['app', 'job', 'outcome', 'phase', 'limit', 'before'].includes(k))
      throw new BadRequest(k, `unknown query parameter "${k}"`);
  }
  if (q['app']) filter.app = q['app'];
  if (q['job']) filter.job = q['job'];
  if (q['outcome'] !== undefined) {
    if (!OUTCOMES.includes(q['outcome'] as RunOutcome))
      throw new BadRequest(
        'outcome',
        `expected one of ${OUTCOMES.join(', ')}, found "${q['outcome']}"`,
      );
    filter.outcome = q['outcome'] as RunOutcome;
  }
  if (q['phase'] !== undefined) {
    if (!PHASES.includes(q['phase'] as RunPhase))
      throw new BadRequest('phase', `expected one of ${PHASES.join(', ')}, found "${q['phase']}"`);
    filter.phase = q['phase'] as RunPhase;
  }
  if (q['limit'] !== undefined) {
    const n = Number(q['limit']);
    if (!/^\d+$/.test(q['limit']) || n < 1 || n > 1000)
      throw new BadRequest('limit', `expected an integer from 1 to 1000, found "${q['limit']}"`);
    filter.limit = n;
  }
  if (q['before'] !== undefined) {
    const before = await store.getRun(q['before']);
    if (!before)
      throw new BadRequest(
        'before',
        `expected the id of a run (the last one of the previous page), found "${q['before']}"`,
      );
    filter.beforeSeq = before.seq;
  }
  return filter;
}

/** Builds the Hono app. */
export function createApi(deps: ApiDeps): Hono {
  const { scheduler, store } = deps;
  const app = new Hono();

  app.onError((err, c) => {
    if (err instanceof BadRequest)
      return c.json(errorJson('invalid_request', err.message, err.path), 400);
    if (err instanceof SchedulerError)
      return c.json(errorJson(err.code, err.message), err.code === 'not_found' ? 404 : 409);
    scheduler.events.emit('warning', { msg: 'API handler failed', err: err.message });
    return c.json(errorJson('internal', 'internal error'), 500);
  });
  app.notFound((c) =>
    c.json(errorJson('not_found', `no route ${c.req.method} ${c.req.path}`), 404),
  );

  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        c.json(
          errorJson('payload_too_large', `request body larger than ${MAX_BODY_BYTES} bytes`),
          413,
        ),
    }),
  );
  app.use('/api/*', async (c, next) => {
    if (
      c.req.method !== 'GET' &&
      c.req.method !== 'HEAD' &&
      deps.token !== null &&
      !tokenMatches(c.req.header('authorization'), deps.token)
    ) {
      return c.json(
        errorJson(
          'unauthorized',
          'mutations need "Authorization: Bearer <token>" (the token file is in the data dir)',
        ),
        401,
      );
    }
    await next();
  });

  app.get('/healthz', (c) => c.json({ status: 'ok', jobs: scheduler.jobs().size }));
  app.get('/openapi.json', (c) => c.json(OPENAPI));
  app.get('/metrics', async (c) => {
    const text = await scheduler.metrics.registry.metrics();
    return c.text(text, 200, { 'content-type': scheduler.metrics.registry.contentType });
  });

  app.get('/api/v1/jobs', async (c) => {
    const jobs = [];
    for (const [key, j] of scheduler.jobs()) {
      const [last] = await store.listRuns({
        app: j.app,
        job: j.job.name,
        phase: 'ended',
        limit: 1,
      });
      const next = scheduler.nextFireOf(key);
      jobs.push({
        app: j.app,
        job: j.job.name,
        schedules: j.job.schedules,
        timezone: j.job.timezone,
        next_fire: next === null ? null : new Date(next).toISOString().replace('.000Z', 'Z'),
        paused: scheduler.isPaused(key),
        enabled: j.enabled,
        last_outcome: last?.outcome ?? null,
        active: scheduler.activeCount(key),
        queued: scheduler.queueLength(key),
      });
    }
    return c.json({ jobs });
  });

  app.get('/api/v1/runs', async (c) => {
    const runs = await store.listRuns(await runFilter(c, store));
    return c.json({ runs: runs.map(runJson) });
  });

  app.get('/api/v1/runs/:id', async (c) => {
    const run = await store.getRun(c.req.param('id'));
    if (!run) throw new SchedulerError('not_found', `no run ${c.req.param('id')}`);
    return c.json(runJson(run));
  });

  app.post('/api/v1/jobs/:app/:job/trigger', async (c) => {
    const when = triggerWhen(await jsonBody(c));
    const result = await scheduler.trigger(c.req.param('app'), c.req.param('job'), when);
    return c.json({ run: runJson(result.run), admission: result.admission }, 202);
  });

  app.post('/api/v1/jobs/:app/:job/pause', async (c) => {
    await scheduler.setPaused(c.req.param('app'), c.req.param('job'), true);
    return c.json({ app: c.req.param('app'), job: c.req.param('job'), paused: true });
  });

  app.post('/api/v1/jobs/:app/:job/resume', async (c) => {
    await scheduler.setPaused(c.req.param('app'), c.req.param('job'), false);
    return c.json({ app: c.req.param('app'), job: c.req.param('job'), paused: false });
  });

  app.post('/api/v1/runs/:id/cancel', async (c) => {
    const run = await scheduler.cancel(c.req.param('id'));
    return c.json({ run: runJson(run) });
  });

  app.post('/api/v1/runs/:id/replay', async (c) => {
    const result = await scheduler.replay(c.req.param('id'));
    return c.json({ run: runJson(result.run), admission: result.admission }, 202);
  });

  deps.extend?.(app);
  return app;
}
