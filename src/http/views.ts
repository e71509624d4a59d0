/**
 * Read views the web UI needs (SPEC §13), each documented in the OpenAPI
 * document and docs/daemon.md: one job with its policy and request, its next
 * fires with DST transitions, counts by outcome over the last hours with
 * completeness and what needs attention, the fires of the coming hours across
 * all jobs, and the request a run sent (never a signature or secret).
 */
import type { Context, Hono } from 'hono';
import { echo, MAX_ECHO } from '../contract/echo.js';
import { rfc3339Utc } from '../contract/run.js';
import { nextFire } from '../contract/schedule/index.js';
import { upcomingFires } from '../contract/schedule/upcoming.js';
import { attemptHeaders } from '../fire/engine.js';
import { MinHeap } from '../daemon/heap.js';
import type { RegisteredJob } from '../daemon/registry.js';
import type { DaemonControl } from '../daemon/control.js';
import { SchedulerError } from '../daemon/core.js';
import {
  RUN_OUTCOMES,
  type LastReport,
  type RunOutcome,
  type Store,
} from '../daemon/store/types.js';
import { HIDDEN, redactHeaders, redactUrl } from './redact.js';
import { errorJson } from './serialize.js';
import { pauseNoteJson } from './freezes.js';
import { skipJson } from './skips.js';

const HOUR = 3_600_000;
/** Outcomes that count as a failure (SPEC §12 `failed`). */
export const FAILED_OUTCOMES: readonly RunOutcome[] = [
  'app_rejected',
  'retries_exhausted',
  'crashed',
  'internal_error',
];

/**
 * Next fires by job: a job's next fire stays right until it passes (or the
 * job's definition changes), so listing 10,000 jobs computes each once.
 */
const nextFires = new WeakMap<RegisteredJob, number | null>();
function nextFireOf(scheduler: DaemonControl, j: RegisteredJob): number | null {
  const cached = nextFires.get(j);
  if (cached !== undefined && (cached === null || cached > scheduler.now())) return cached;
  const next = scheduler.nextFireOf(j.key);
  nextFires.set(j, next);
  return next;
}

/** A job as `GET /api/v1/jobs` lists it. */
export function jobJson(
  scheduler: DaemonControl,
  j: RegisteredJob,
  recent: readonly RunOutcome[],
  last?: LastReport,
): Record<string, unknown> {
  // a paused job has no next fire: its schedule fires nothing until it is resumed
  const paused = scheduler.isPaused(j.key);
  const next = paused ? null : nextFireOf(scheduler, j);
  return {
    app: j.app,
    job: j.job.name,
    schedules: j.job.schedules,
    timezone: j.job.timezone,
    next_fire: next === null ? null : rfc3339Utc(next),
    paused,
    pause_note: paused ? pauseNoteJson(scheduler.pauseNote?.(j.key) ?? null) : null,
    skips: (scheduler.skipsOf?.(j.key) ?? []).map(skipJson),
    enabled: j.enabled,
    last_outcome: recent[0] ?? null,
    recent_outcomes: recent,
    active: scheduler.activeCount(j.key),
    queued: scheduler.queueLength(j.key),
    // host mode (SPEC §15): who fires it, and for a watched job its newest report
    fired_by: j.firedBy ?? 'daemon',
    ...(j.firedBy === 'host'
      ? {
          last_report:
            last === undefined
              ? null
              : { run_id: last.runId, host: last.host, at: rfc3339Utc(last.at) },
        }
      : {}),
  };
}

class Invalid extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** Reads the query: only `allowed` keys; integers within their bounds. */
function query<K extends string>(
  c: Context,
  ints: Record<K, [min: number, max: number, dflt: number]>,
): Record<K, number> {
  const q = c.req.query();
  for (const k of Object.keys(q)) {
    if (!(k in ints)) throw new Invalid(k.slice(0, MAX_ECHO), `unknown query parameter ${echo(k)}`);
  }
  const out = {} as Record<K, number>;
  for (const [k, [min, max, dflt]] of Object.entries(ints) as [K, [number, number, number]][]) {
    const v = q[k];
    if (v === undefined) out[k] = dflt;
    else if (!/^\d{1,6}$/.test(v) || Number(v) < min || Number(v) > max)
      throw new Invalid(k, `expected an integer from ${min} to ${max}, found ${echo(v)}`);
    else out[k] = Number(v);
  }
  return out;
}

function jobOf(scheduler: DaemonControl, c: Context): RegisteredJob {
  const key = `${c.req.param('app')}/${c.req.param('job')}`;
  const j = scheduler.jobs().get(key);
  if (!j) throw new SchedulerError('not_found', `no job ${echo(key)}`);
  return j;
}

/**
 * `GET /api/v1/jobs[?offset=&limit=]`: jobs sorted by app and job, each with
 * its last 20 outcomes from **one** store query (of the page's jobs only);
 * `total` counts them all, so a client can show a first page at once.
 */
export function listJobs(scheduler: DaemonControl, store: Store) {
  return guarded(async (c: Context) => {
    const all = [...scheduler.jobs().values()].sort((a, b) =>
      a.app === b.app ? (a.job.name < b.job.name ? -1 : 1) : a.app < b.app ? -1 : 1,
    );
    const { offset, limit } = query(c, {
      offset: [0, 1_000_000, 0],
      limit: [1, 100_000, 100_000],
    });
    const page = all.slice(offset, offset + limit);
    const recent = await store.recentOutcomes(refs(page), 20);
    const byKey = new Map(recent.map((r) => [`${r.app}/${r.job}`, r.outcomes]));
    const watched = page.filter((j) => j.firedBy === 'host');
    const reports = watched.length === 0 ? [] : await store.lastReports(refs(watched));
    const lastOf = new Map(reports.map((r) => [`${r.app}/${r.job}`, r]));
    const jobs = page.map((j) => jobJson(scheduler, j, byKey.get(j.key) ?? [], lastOf.get(j.key)));
    return c.json({ jobs, total: all.length });
  });
}

/** Answers an {@link Invalid} query as 400 `invalid_request`. */
function guarded(h: (c: Context) => Promise<Response> | Response) {
  return async (c: Context): Promise<Response> => {
    try {
      return await h(c);
    } catch (err) {
      if (err instanceof Invalid)
        return c.json(errorJson('invalid_request', err.message, err.path), 400);
      throw err;
    }
  };
}

const refs = (jobs: Iterable<RegisteredJob>) =>
  [...jobs].map((j) => ({ app: j.app, job: j.job.name }));

/** Adds the views to the API. */
export function mountViews(app: Hono, deps: { scheduler: DaemonControl; store: Store }): void {
  const { scheduler, store } = deps;
  const now = (): number => scheduler.now();
  const guard = guarded;

  app.get(
    '/api/v1/jobs/:app/:job',
    guard(async (c) => {
      const j = jobOf(scheduler, c);
      const ref = { app: j.app, job: j.job.name };
      const [recent] = await store.recentOutcomes([ref], 20);
      const [last] = j.firedBy === 'host' ? await store.lastReports([ref]) : [];
      const r = j.job.request;
      const cmd = j.job.command;
      return c.json({
        ...jobJson(scheduler, j, recent?.outcomes ?? [], last),
        policy: j.policy,
        // the windows as written (a holiday file's name, not its dates)
        blackout: (j.job.policy.blackout ?? []).map((w) =>
          'dates_file' in w ? { dates_file: w.dates_file } : w,
        ),
        ...(r
          ? {
              request: {
                method: r.method,
                url: redactUrl(r.url),
                headers: redactHeaders(r.headers, r.headers_from_secrets),
                headers_from_secrets: Object.keys(r.headers_from_secrets ?? {}),
              },
            }
          : {}),
        // a command job: its argv and the names (never the values) of its environment
        ...(cmd
          ? {
              command: {
                argv: cmd.argv,
                env: Object.keys(cmd.env ?? {}),
                env_from_secrets: Object.keys(cmd.env_from_secrets ?? {}),
              },
            }
          : {}),
        signed: j.job.auth.secret_refs.length > 0,
        // who hears of the job's events (SPEC §12), defaults applied; notifier secrets never
        notify: j.notify.map((n) => ({
          to: n.notifier,
          type: n.type,
          on: n.on,
          slow_after_seconds: n.slowAfterSeconds,
          repeat_every_seconds: n.repeatMs / 1000,
        })),
      });
    }),
  );

  app.get(
    '/api/v1/jobs/:app/:job/next',
    guard((c) => {
      const j = jobOf(scheduler, c);
      const { count } = query(c, { count: [1, 100, 10] });
      const fires = upcomingFires(j.schedules, j.job.timezone, now(), count);
      return c.json({
        app: j.app,
        job: j.job.name,
        timezone: j.job.timezone,
        fires: fires.map((f) => ({
          utc: rfc3339Utc(f.at),
          local: f.local,
          schedule_indexes: f.scheduleIndexes,
          transition: f.transition && { ...f.transition, at: rfc3339Utc(f.transition.at) },
        })),
      });
    }),
  );

  app.get(
    '/api/v1/stats',
    guard(async (c) => {
      const { hours, limit } = query(c, { hours: [1, 168, 24], limit: [1, 10_000, 20] });
      const until = now();
      const since = Math.floor(until / HOUR) * HOUR - (hours - 1) * HOUR;
      const jobs = [...scheduler.jobs().values()];
      const [groups, last] = await Promise.all([
        store.outcomeSummary(refs(jobs), since),
        store.recentOutcomes(refs(jobs), 1),
      ]);
      const buckets = Array.from({ length: hours }, (_, i) => ({
        start: since + i * HOUR,
        counts: {} as Partial<Record<RunOutcome, number>>,
      }));
      const totals: Partial<Record<RunOutcome, number>> = {};
      const perJob = new Map<string, { expected: number; succeeded: number; missed: number }>();
      for (const g of groups) {
        const b = buckets[Math.floor((g.hour - since) / HOUR)];
        if (b) b.counts[g.outcome] = (b.counts[g.outcome] ?? 0) + g.count;
        totals[g.outcome] = (totals[g.outcome] ?? 0) + g.count;
        if (!g.scheduled) continue;
        const key = `${g.app}/${g.job}`;
        const p = perJob.get(key) ?? { expected: 0, succeeded: 0, missed: 0 };
        p.expected += g.count;
        if (g.outcome === 'success') p.succeeded += g.count;
        if (g.outcome === 'missed') p.missed += g.count;
        perJob.set(key, p);
      }
      const completeness = [...perJob]
        .map(([key, p]) => ({ key, ...p, ratio: p.succeeded / p.expected }))
        .sort((a, b) => a.ratio - b.ratio || b.expected - a.expected || a.key.localeCompare(b.key));
      const lastOf = new Map(last.map((l) => [`${l.app}/${l.job}`, l.outcomes[0]]));
      const attention = jobs
        .map((j) => {
          const lastOutcome = lastOf.get(j.key) ?? null;
          const missed = perJob.get(j.key)?.missed ?? 0;
          const reasons = [
            ...(lastOutcome && FAILED_OUTCOMES.includes(lastOutcome) ? ['last_failed'] : []),
            ...(missed > 0 ? ['missed'] : []),
            ...(scheduler.isPaused(j.key) ? ['paused'] : []),
          ];
          return { app: j.app, job: j.job.name, reasons, last_outcome: lastOutcome, missed };
        })
        .filter((a) => a.reasons.length > 0)
        .sort((a, b) => rank(a.reasons) - rank(b.reasons) || b.missed - a.missed);
      return c.json({
        since: rfc3339Utc(since),
        until: rfc3339Utc(until),
        hours: buckets.map((b) => ({ start: rfc3339Utc(b.start), counts: b.counts })),
        totals,
        outcomes: RUN_OUTCOMES,
        completeness: completeness.slice(0, limit).map((p) => {
          const [a, ...rest] = p.key.split('/');
          return {
            app: a,
            job: rest.join('/'),
            expected: p.expected,
            succeeded: p.succeeded,
            ratio: p.ratio,
          };
        }),
        completeness_jobs: completeness.length,
        attention: attention.slice(0, limit),
        attention_total: attention.length,
      });
    }),
  );

  app.get(
    '/api/v1/upcoming',
    guard((c) => {
      const { hours, limit } = query(c, { hours: [1, 168, 24], limit: [1, 1000, 50] });
      const from = now();
      const until = from + hours * HOUR;
      type Head = { at: number; j: RegisteredJob; i: number };
      const heap = new MinHeap<Head>();
      for (const j of scheduler.jobs().values()) {
        if (!j.enabled) continue;
        j.schedules.forEach((s, i) => {
          const at = nextFire(s, j.job.timezone, from);
          if (at !== null && at <= until) heap.push({ at, j, i });
        });
      }
      const fires = [];
      let last: Head | undefined;
      while (fires.length < limit && (last = heap.pop())) {
        const { at, j, i } = last;
        fires.push({
          app: j.app,
          job: j.job.name,
          schedule_index: i,
          timezone: j.job.timezone,
          utc: rfc3339Utc(at),
          paused: scheduler.isPaused(j.key),
        });
        const next = nextFire(j.schedules[i]!, j.job.timezone, at);
        if (next !== null && next <= until) heap.push({ at: next, j, i });
      }
      return c.json({
        from: rfc3339Utc(from),
        until: rfc3339Utc(until),
        fires,
        more: heap.peek() !== undefined,
      });
    }),
  );

  app.get('/api/v1/runs/:id/request', async (c) => {
    const run = await store.getRun(c.req.param('id'));
    if (!run) throw new SchedulerError('not_found', `no run ${echo(c.req.param('id'))}`);
    const j = scheduler.jobs().get(`${run.app}/${run.job}`);
    if (!j) throw new SchedulerError('not_found', `job ${run.app}/${run.job} is no longer loaded`);
    const request = j.job.request;
    if (!request)
      throw new SchedulerError(
        'not_found',
        `run ${echo(run.id)} is a command run: it sends no request`,
      );
    const sent = attemptHeaders(
      {
        app: run.app,
        job: j.job,
        runId: run.id,
        runKey: run.runKey,
        fireTimeMs: run.scheduledTime,
        actualTimeMs: run.startedAt ?? run.createdAt,
        secrets: [], // never signs here: the signature is not shown
        // the names of the headers from secrets, never their values
        headerSecrets: Object.fromEntries(
          Object.keys(request.headers_from_secrets ?? {}).map((name) => [name, HIDDEN]),
        ),
        previousSuccessMs: null,
      },
      Math.max(1, run.attempts),
      run.startedAt ?? run.createdAt,
      undefined,
    );
    const headers: Record<string, string> = {};
    const statics = redactHeaders(request.headers, request.headers_from_secrets);
    for (const [name, value] of Object.entries(sent)) headers[name] = statics[name] ?? value;
    if (run.startedAt === null) headers['X-Cron-Fire-Time-Actual'] = '(set when the run starts)';
    if (j.policy.concurrency_scope === 'global') headers['X-Cron-Fencing-Token'] = '(not recorded)';
    // the traceparent the last attempt sent, as recorded (one per attempt in the attempt log)
    const recorded = run.attemptLog.at(-1)?.traceparent;
    headers['traceparent'] =
      recorded ?? (run.attempts > 0 ? '(not recorded)' : '(new per attempt)');
    headers['X-Cron-Signature'] = j.job.auth.secret_refs.length > 0 ? HIDDEN : '(not signed)';
    return c.json({
      run: run.id,
      method: request.method,
      url: redactUrl(request.url),
      body_bytes: Buffer.byteLength(request.body),
      headers,
      sent: run.attempts > 0,
      note:
        (run.attempts > 0 ? '' : 'Not sent yet: the headers it will carry. ') +
        'Reconstructed from the run and the job as loaded now; X-Cron-Attempt and traceparent are the last attempt’s (the attempts list each one’s); X-Cron-Previous-Success-Time is not recorded.',
    });
  });
}

function rank(reasons: string[]): number {
  return reasons.includes('last_failed') ? 0 : reasons.includes('missed') ? 1 : 2;
}
