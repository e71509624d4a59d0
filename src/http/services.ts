/**
 * The services' routes (SPEC §17): `GET /api/v1/services` (every service with its instances:
 * state, pid, uptime, restarts, readiness, last exit, the run whose output is live),
 * `GET /api/v1/services/{app}/{service}`, and `POST …/{start|stop|restart}` with an optional
 * `{"instance": i}`. A start of a running instance answers `skipped` (recorded so).
 */
import type { Hono } from 'hono';
import { echo, echoValue, MAX_ECHO } from '../contract/echo.js';
import { LIMITS } from '../contract/manifest/defaults.js';
import { rfc3339Utc } from '../contract/run.js';
import type { DaemonControl } from '../daemon/control.js';
import { SchedulerError } from '../daemon/core.js';
import type { ServiceAction, ServiceView } from '../daemon/services/supervisor.js';
import { BadRequest } from './serialize.js';

const time = (ms: number | null): string | null => (ms === null ? null : rfc3339Utc(ms));

/** A service as the API returns it. */
export function serviceJson(s: ServiceView, now: number): Record<string, unknown> {
  return {
    app: s.app,
    service: s.service,
    argv: s.argv,
    instances: s.instances,
    crash_loop: s.crashLoop,
    ready_check: s.ready,
    instance_states: s.instanceViews.map((i) => ({
      instance: i.index,
      state: i.state,
      pid: i.pid,
      run_id: i.runId,
      started_at: time(i.startedAt),
      uptime_seconds:
        i.startedAt === null ? null : Math.max(0, Math.floor((now - i.startedAt) / 1000)),
      restarts: i.restarts,
      ready: i.ready,
      crash_loop: i.crashLoop,
      next_start_at: time(i.nextStartAt),
      last_exit:
        i.lastExit === null
          ? null
          : { at: time(i.lastExit.at), outcome: i.lastExit.outcome, error: i.lastExit.error },
    })),
  };
}

async function instanceOf(text: string): Promise<number | undefined> {
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest('', 'request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequest('', 'request body must be a JSON object');
  for (const k of Object.keys(body))
    if (k !== 'instance')
      throw new BadRequest(k.slice(0, MAX_ECHO), `unknown field ${echo(k)} (expected "instance")`);
  const n = (body as { instance?: unknown }).instance;
  if (n === undefined) return undefined;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= LIMITS.instances.max)
    throw new BadRequest(
      'instance',
      `expected an instance index from 0 to ${LIMITS.instances.max - 1}, found ${echoValue(n)}`,
    );
  return n;
}

/** Registers the routes. */
export function registerServices(app: Hono, scheduler: DaemonControl): void {
  const views = async (): Promise<ServiceView[]> => (await scheduler.serviceViews?.()) ?? [];
  app.get('/api/v1/services', async (c) => {
    const now = scheduler.now();
    return c.json({ services: (await views()).map((s) => serviceJson(s, now)) });
  });
  app.get('/api/v1/services/:app/:service', async (c) => {
    const { app: a, service } = c.req.param();
    const found = (await views()).find((s) => s.app === a && s.service === service);
    if (!found) throw new SchedulerError('not_found', `no service ${echo(`${a}/${service}`)}`);
    return c.json(serviceJson(found, scheduler.now()));
  });
  for (const action of ['start', 'stop', 'restart'] as const satisfies readonly ServiceAction[])
    app.post(`/api/v1/services/:app/:service/${action}`, async (c) => {
      const { app: a, service } = c.req.param();
      const instance = await instanceOf(await c.req.text());
      if (!scheduler.serviceAction)
        throw new SchedulerError('not_found', `no service ${echo(`${a}/${service}`)}`);
      const results = await scheduler.serviceAction(action, a, service, instance);
      return c.json({
        app: a,
        service,
        action,
        results: results.map((r) => ({
          instance: r.instance,
          result: r.result,
          run_id: r.runId ?? null,
        })),
      });
    });
}
