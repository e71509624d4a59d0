/**
 * The daemon's REST API (SPEC §7) on Hono: JSON under `/api/v1`, `/healthz`, `/metrics`,
 * `/openapi.json`. Who may call what (the Host check, bearer token or session for every API
 * route, the throttle on wrong tokens) is decided in `access.ts`. Handlers only translate HTTP
 * to scheduler calls; the logic lives in `src/daemon`.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { parseInstant } from '../contract/run.js';
import type { DaemonControl } from '../daemon/control.js';
import { SchedulerError } from '../daemon/core.js';
import { echo, echoValue, MAX_ECHO } from '../contract/echo.js';
import {
  RUN_OUTCOMES,
  RUN_PHASES,
  type RunFilter,
  type RunOutcome,
  type RunPhase,
  type RunRecord,
  type Store,
} from '../daemon/store/types.js';
import type { RunLogs } from '../daemon/run-logs.js';
import { OUTCOME_CHOICES, parseOutcomes } from '../daemon/store/outcomes.js';
import { Access } from './access.js';
import { mountAccessApi } from './access-api.js';
import { auditPublic, authorize } from './authorize.js';
import { EventHub } from './events.js';
import { AllowedHosts } from './hosts.js';
import { openApiFor } from './openapi.js';
import { registerRunLog } from './run-log.js';
import { StreamGuard } from './stream-guard.js';
import { isHostRoute, registerReports } from './reports.js';
import type { Watch } from '../daemon/watch/watch.js';
import { registerNotifications } from './notifications.js';
import { registerBackfills } from './backfills.js';
import { pauseNoteOf, registerFreezes } from './freezes.js';
import { registerSkips } from './skips.js';
import { triggerOptions } from './trigger-options.js';
import { registerServices } from './services.js';
import { registerDeadLetters } from './dead-letters.js';
import { BadRequest, errorJson, runJson } from './serialize.js';
import { Sessions } from './session.js';
import { mountSso, type SsoConfig } from './sso.js';
import { TokenAuth } from './tokens.js';
import type { RevocationStore } from './session-revocations.js';
import { mountUiApi } from './ui-api.js';
import { listJobs, mountViews } from './views.js';

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 64 * 1024;

const OUTCOMES = RUN_OUTCOMES;
const STATUS = { not_found: 404, conflict: 409, unavailable: 503, invalid_request: 400 } as const;
const PHASES = RUN_PHASES;

/** What the API needs. */
export interface ApiDeps {
  /** The scheduler, or the cluster replica in high availability. */
  scheduler: DaemonControl;
  store: Store;
  /** Bearer token of the API; null = no auth (loopback only, `--no-auth`). */
  token: string | null;
  /** The `Host` names served; default the loopback names only. */
  hosts?: AllowedHosts;
  /** `/metrics` needs the token too (`serve --metrics-auth`); default open. */
  metricsAuth?: boolean;
  /** Where logged-out sessions are kept across restarts; default in memory only. */
  revocations?: RevocationStore;
  /** Command runs' output (`GET /api/v1/runs/{id}/log`); absent: no run has any. */
  logs?: RunLogs;
  /** Optional extra routes (the web UI). */
  extend?: (app: Hono) => void;
  /** False while the daemon is still starting: the API answers 503 until it is ready. */
  ready?: () => boolean;
  /** The live event stream (`/api/v1/events`); one is made when absent. */
  hub?: EventHub;
  /** Single sign-on for the web UI (`serve --oidc-issuer …`, SPEC §18); absent: none. */
  sso?: SsoConfig;
  /** Host mode (`serve --watch`, SPEC §15): reports and pings; absent: none are accepted. */
  watch?: Watch | null;
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
      throw new BadRequest(
        k.slice(0, MAX_ECHO),
        `unknown field ${echo(k)} (expected "at" or "after_seconds")`,
      );
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
        `expected an RFC 3339 instant such as "2026-03-29T01:00:00Z", found ${echoValue(body['at'])}`,
      );
    }
    return { at };
  }
  if (body['after_seconds'] !== undefined) {
    const n = body['after_seconds'];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 366 * 86400) {
      throw new BadRequest(
        'after_seconds',
        `expected an integer number of seconds from 0 to 31622400, found ${echoValue(n)}`,
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
      throw new BadRequest(k.slice(0, MAX_ECHO), `unknown query parameter ${echo(k)}`);
  }
  if (q['app']) filter.app = q['app'];
  if (q['job']) filter.job = q['job'];
  if (q['outcome'] !== undefined) {
    if (OUTCOMES.includes(q['outcome'] as RunOutcome)) filter.outcome = q['outcome'] as RunOutcome;
    else {
      // a list (`app_rejected,crashed`) or a group (`failed`)
      const parsed = parseOutcomes(q['outcome']);
      if (!parsed.ok)
        throw new BadRequest(
          'outcome',
          `expected ${OUTCOME_CHOICES}; found ${echo(parsed.unknown)} in ${echo(q['outcome'])}`,
        );
      filter.outcomes = parsed.outcomes;
    }
  }
  if (q['phase'] !== undefined) {
    if (!PHASES.includes(q['phase'] as RunPhase))
      throw new BadRequest(
        'phase',
        `expected one of ${PHASES.join(', ')}, found ${echo(q['phase'] ?? '')}`,
      );
    filter.phase = q['phase'] as RunPhase;
  }
  if (q['limit'] !== undefined) {
    const n = Number(q['limit']);
    if (!/^\d+$/.test(q['limit']) || n < 1 || n > 1000)
      throw new BadRequest(
        'limit',
        `expected an integer from 1 to 1000, found ${echo(q['limit'] ?? '')}`,
      );
    filter.limit = n;
  }
  if (q['before'] !== undefined) {
    const before = await store.getRun(q['before']);
    if (!before)
      throw new BadRequest(
        'before',
        `expected the id of a run (the last one of the previous page), found ${echo(q['before'] ?? '')}`,
      );
    filter.beforeSeq = before.seq;
  }
  return filter;
}

/** Builds the Hono app. */
/** Ledger writes failing this long make `/healthz` answer 503. */
export const STORE_FAILING_MS = 3000;

export function createApi(deps: ApiDeps): Hono {
  const { scheduler, store } = deps;
  const app = new Hono();
  // sessions expire and lock-outs end on the daemon's clock (injected in tests)
  const now = (): number => scheduler.now();
  const sessions = deps.token === null ? null : new Sessions(deps.token, now, deps.revocations);
  const tokens = deps.token === null ? null : new TokenAuth(store, deps.token, now);
  const access = new Access(
    sessions,
    tokens,
    deps.hosts ?? new AllowedHosts('127.0.0.1'),
    (msg) => scheduler.events.emit('warning', { msg, err: 'refused credentials' }),
    deps.metricsAuth === true,
    now,
  );
  // before anything else, whatever the route: a request for another name is not ours
  app.use('*', async (c, next) => access.misdirected(c) ?? (await next()));

  app.onError((err, c) => {
    if (err instanceof BadRequest)
      return c.json(errorJson('invalid_request', err.message, err.path), 400);
    if (err instanceof SchedulerError)
      return c.json(errorJson(err.code, err.message), STATUS[err.code]);
    if (err.name === 'StoreReadError' || err.name === 'SqliteError')
      // a damaged row or an unreadable ledger: the daemon is fine, this answer is not available
      return c.json(errorJson('unavailable', `the ledger could not be read: ${err.message}`), 503);
    scheduler.events.emit('warning', { msg: 'API handler failed', err: err.message });
    return c.json(errorJson('internal', 'internal error'), 500);
  });
  app.notFound((c) =>
    c.json(errorJson('not_found', `no route ${c.req.method} ${c.req.path}`), 404),
  );

  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) =>
      c.json(
        errorJson('payload_too_large', `request body larger than ${MAX_BODY_BYTES} bytes`),
        413,
      ),
  });
  // host-mode routes have a limit of their own (reports.ts)
  app.use('*', (c, next) => (isHostRoute(c.req.path) ? next() : limit(c, next)));
  app.use('*', async (c, next) => {
    if (deps.ready && !deps.ready())
      return c.json(errorJson('unavailable', 'the daemon is starting; try again in a moment'), 503);
    await next();
  });
  // who may call what (route-roles.ts), and the audit log of every mutation
  app.use('/api/*', authorize({ access, store, scheduler }));

  app.get('/healthz', (c) => {
    // a store failing for more than a few seconds is no health (SPEC §9 item 6): nothing fires
    const store = scheduler.storeHealth?.() ?? null;
    const failing = store !== null && store.failingForMs >= STORE_FAILING_MS;
    const body = {
      status: failing ? 'failing' : 'ok',
      jobs: scheduler.jobs().size,
      role: scheduler.role?.() ?? 'single',
      store: store === null ? 'ok' : 'failing',
      ...(failing
        ? {
            reason: `ledger writes have been failing for ${Math.round(store.failingForMs / 1000)} s: ${store.error.slice(0, 200)}`,
          }
        : {}),
    };
    return c.json(body, failing ? 503 : 200);
  });
  app.get('/openapi.json', (c) => c.json(openApiFor(scheduler.cluster !== undefined) as object));
  app.get('/metrics', async (c) => {
    if (access.metricsAuth) {
      const verdict = await access.check(c, 'read');
      if (!verdict.ok) return access.refuse(c, verdict);
    }
    const text = await scheduler.metrics.registry.metrics();
    return c.text(text, 200, { 'content-type': scheduler.metrics.registry.contentType });
  });

  // one store query for every job's last 20 outcomes, whatever the number of jobs (views.ts)
  app.get('/api/v1/jobs', listJobs(scheduler, store));

  /** What a run in flight waits for, as the daemon running it knows (SPEC §16 rate limits). */
  const waitingFor = (r: RunRecord): string | null =>
    r.phase === 'ended' ? null : (scheduler.waitingFor?.(r.id) ?? null);

  app.get('/api/v1/runs', async (c) => {
    const runs = await store.listRuns(await runFilter(c, store));
    return c.json({ runs: runs.map((r) => runJson(r, waitingFor(r))) });
  });

  registerNotifications(app, store);
  registerServices(app, scheduler);

  app.get('/api/v1/runs/:id', async (c) => {
    const run = await store.getRun(c.req.param('id'));
    if (!run) throw new SchedulerError('not_found', `no run ${echo(c.req.param('id'))}`);
    return c.json(runJson(run, waitingFor(run)));
  });

  app.get('/api/v1/cluster', async (c) => {
    if (!scheduler.cluster)
      throw new SchedulerError(
        'not_found',
        'not a cluster: this daemon runs on its own SQLite store',
      );
    const v = await scheduler.cluster();
    return c.json({
      self: v.self,
      leader: v.leader && {
        replica: v.leader.replica,
        epoch: v.leader.epoch,
        lease_expires_at: new Date(v.leader.leaseExpiresAt).toISOString(),
      },
      replicas: v.replicas.map((r) => ({
        replica: r.replica,
        role: r.role,
        last_seen: new Date(r.lastSeen).toISOString(),
      })),
    });
  });

  // the responses that stay open end with their credential (revoked, expired)
  const guard = new StreamGuard();
  registerRunLog(app, {
    scheduler,
    store,
    logs: deps.logs,
    watch: (c, end) => guard.watch(access.credentialCheck(c), end),
  });
  registerReports(app, deps.watch ?? null);
  registerBackfills(app, { scheduler, store });
  registerDeadLetters(app, { scheduler, store });
  registerFreezes(app, { scheduler });
  registerSkips(app, { scheduler });

  app.post('/api/v1/jobs/:app/:job/trigger', async (c) => {
    const json = await jsonBody(c);
    const opts = triggerOptions(c, json);
    const when = triggerWhen(json);
    const result = await scheduler.trigger(c.req.param('app'), c.req.param('job'), when, opts);
    return c.json({ run: runJson(result.run), admission: result.admission }, 202);
  });

  app.post('/api/v1/jobs/:app/:job/pause', async (c) => {
    const note = await pauseNoteOf(c);
    await scheduler.setPaused(c.req.param('app'), c.req.param('job'), true, note);
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

  mountViews(app, deps);
  mountUiApi(app, access, deps.hub ?? new EventHub(scheduler.events), guard, (c, row) =>
    auditPublic(c, { store, scheduler, warn: access.warn }, row),
  );
  mountAccessApi(app, {
    store,
    scheduler,
    tokens,
    warn: access.warn,
    revoked: () => void guard.recheck(),
  });
  if (deps.sso && sessions) mountSso(app, deps.sso, { access, store, scheduler });
  deps.extend?.(app);
  return app;
}
