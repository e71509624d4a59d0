/**
 * `cronix trigger <app>.<job>` (SPEC §5, §11): load the spec, resolve secrets
 * (an HTTP job's signing secrets and `headers_from_secrets`; a command job's `env_from_secrets`),
 * compute the fire time and run key, then run the shared per-fire engine
 * under the lock. A success is recorded through the engine's `record` hook,
 * before the lock is released (SPEC §9 item 4), so the next holder's
 * duplicate check sees it. Returns the exit code.
 */
import { join } from 'node:path';
import { jobChangeHash } from '../contract/manifest/change-hash.js';
import type { RunFacts } from '../notify/message.js';
import { attemptStopSeconds } from '../contract/manifest/effective.js';
import {
  exitCodeFor,
  lockTtlMs,
  rfc3339Utc,
  runKey as makeRunKey,
  SHIM_EXIT,
  type FireOutcome,
} from '../contract/run.js';
import { runFire, type CommandDeps, type FireResult } from '../fire/engine.js';
import { runTracer, type AttemptTrace, type RunTracer } from '../fire/tracing.js';
import { uuidv7 } from '../fire/ids.js';
import type { Clock, CommandRunner, Transport } from '../fire/types.js';
import { LockUnavailableError, type LockBackend } from '../locks/types.js';
import { resolveEnvSecrets, resolveHeaderSecrets } from '../secrets/env-secrets.js';
import { resolveSecretRefs, shortSecretsError } from '../secrets/resolve.js';
import { commandDeps } from './command.js';
import { chooseFireTime, fireTimeFromJobName } from './fire-time.js';
import { createGuard } from '../locks/guard.js';
import type { ShimLogger } from './log.js';
import { logFireEvent } from './log.js';
import { writeTextfile } from './metrics.js';
import { openScope } from './scope.js';
import { loadSpec, SpecError, type JobSpec } from './spec.js';
import type { ShimEvent, ShimNotifications } from './notify.js';
import { HostState } from './state.js';
import { openFireReports } from './report-config.js';
import type { FireReports } from './fire-report.js';

/** Resolved settings of one invocation (flags, then environment, then defaults). */
export interface TriggerSettings {
  target: string;
  specDir: string;
  lockDir: string;
  stateDir: string;
  /** `redis://…` for global scope. */
  redisUrl: string | undefined;
  redisPrefix: string;
  /** `--fire-time`, epoch ms, already range-checked. */
  fireTimeMs: number | undefined;
  /** `$CRONIX_K8S_JOB_NAME`: the pod's Job, whose name carries the scheduled minute. */
  k8sJobName?: string | undefined;
  contendedExit: 4 | 75;
  metricsDir: string | undefined;
  hostId: string;
  /** `--report-to`, else `$CRONIX_REPORT_URL` (SPEC §15); the spec's `report_to` comes next. */
  reportTo?: string | undefined;
}

/** Injected dependencies (real ones by default). */
export interface TriggerDeps {
  env: NodeJS.ProcessEnv;
  clock: Clock;
  transport?: Transport;
  /** Runs command jobs (default: the real runner, loaded only for a command job). */
  commandRunner?: CommandRunner;
  logger: ShimLogger;
  /** Stops the fire (SIGTERM, or the process deadline). */
  signal?: AbortSignal;
  /** Told the job's policy once the spec is loaded, to set the process deadline. */
  onJob?: (spec: JobSpec) => void;
  /** Test seam: the transport of the reports (default a real HTTP client). */
  reportTransport?: Transport;
}

/** A failure before the engine runs: logged as one terminal line. */
class Early extends Error {
  constructor(
    readonly outcome: FireOutcome,
    message: string,
  ) {
    super(message);
  }
}

/** Loads the spec; throws {@link Early} for a bad spec or a policy the shim cannot run. */
async function loadJob(s: TriggerSettings, deps: TriggerDeps): Promise<JobSpec> {
  const spec = await loadSpec(s.specDir, s.target).catch((err: unknown) => {
    throw err instanceof SpecError ? new Early('internal-error', err.message) : err;
  });
  deps.logger.bind({ app: spec.app, job: spec.job.name });
  deps.onJob?.(spec);
  if (spec.job.policy.concurrency === 'Enqueue') {
    throw new Early(
      'internal-error',
      'policy.concurrency "Enqueue" needs the daemon (cronix serve); the shim cannot queue fires',
    );
  }
  return spec;
}

/**
 * Resolves the secrets: an HTTP job's signing secrets and `headers_from_secrets`, or a
 * command job's `env_from_secrets` (a command job signs nothing, so SPEC §5 step 2 does not
 * apply to it). Throws {@link Early} for a secret that does not resolve.
 */
function resolveSecrets(spec: JobSpec, deps: TriggerDeps) {
  if (spec.job.command !== undefined) {
    const env = resolveEnvSecrets(spec.job.command.env_from_secrets, { env: deps.env });
    if (!env.ok) throw new Early('internal-error', env.problems.join('; '));
    deps.logger.redactSecrets(Object.values(env.values));
    return { secrets: [] as string[], secretEnv: env.values, headerSecrets: {} };
  }
  const resolved = resolveSecretRefs(spec.secretRefs, { env: deps.env });
  if (resolved.secrets.length === 0) {
    const why = resolved.unresolved.map((u) => `${u.ref}: ${u.reason}`).join('; ');
    throw new Early(
      'internal-error',
      `no secret resolved (${why || 'the job has no secret_refs'}); requests must be signed`,
    );
  }
  const short = shortSecretsError(resolved);
  if (short !== null) throw new Early('internal-error', short);
  const headers = resolveHeaderSecrets(spec.job.request?.headers_from_secrets, { env: deps.env });
  if (!headers.ok) throw new Early('internal-error', headers.problems.join('; '));
  deps.logger.redactSecrets([...resolved.secrets, ...Object.values(headers.values)]);
  return { secrets: resolved.secrets, secretEnv: {}, headerSecrets: headers.values };
}

/** Why a stopped fire stopped, for its `stopped` line. */
function stopCause(signal: AbortSignal | undefined): () => string {
  return () =>
    signal?.reason === 'deadline'
      ? 'the fire passed its deadline (its worst case plus lock allowances) and was stopped'
      : 'fire stopped by a signal before it completed';
}

/** The terminal line for an error thrown outside the engine. */
function failure(err: unknown): { outcome: FireOutcome; event: string; message: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof Early) return { outcome: err.outcome, event: 'internal-error', message };
  if (err instanceof LockUnavailableError) {
    return { outcome: 'lock-unavailable', event: 'lock-unavailable', message };
  }
  // LockConfigError (bad Redis URL, unusable lock dir), SpecError and anything else: exit 3
  return { outcome: 'internal-error', event: 'internal-error', message };
}

/** What a fire's outcome means to notifications (SPEC §12): contention, duplicates and stops are none. */
function shimEvent(outcome: FireOutcome): ShimEvent {
  if (outcome === 'success') return 'success';
  if (outcome === 'app-rejected' || outcome === 'retries-exhausted' || outcome === 'internal-error')
    return 'failed';
  return null;
}

/** Runs one fire and returns the process exit code. */
export async function trigger(s: TriggerSettings, deps: TriggerDeps): Promise<number> {
  const { clock, logger } = deps;
  const started = clock.now();
  const runId = uuidv7(started);
  logger.bind({ run_id: runId });
  let backend: LockBackend | null = null;
  let transport: Transport | undefined;
  let command: (CommandDeps & { end(): void }) | undefined;
  let outcome: FireOutcome = 'internal-error';
  let result: FireResult | undefined;
  let state: HostState | undefined;
  let lastSuccessMs: number | null = null;
  let app = s.target;
  let jobName = '';
  let notes: ShimNotifications | undefined;
  let runKeyText = '';
  let fireTime = started;
  let errorText: string | null = null;
  // OpenTelemetry only with OTEL_EXPORTER_OTLP_ENDPOINT: otherwise nothing is loaded
  let tracer: RunTracer | null = null;
  const traced: AttemptTrace[] = [];
  let reports: FireReports | undefined;
  try {
    const spec = await loadJob(s, deps);
    const { job } = spec;
    app = spec.app;
    jobName = job.name;
    const fromJobName =
      s.fireTimeMs === undefined && s.k8sJobName
        ? fireTimeFromJobName(spec, s.k8sJobName, started)
        : null;
    const choice = chooseFireTime(spec, s.fireTimeMs ?? fromJobName ?? undefined, started);
    if (choice === null)
      throw new Early('internal-error', `the job's schedules have no fire before now`);
    const { fireTimeMs } = choice;
    const runKey = makeRunKey(
      app,
      job.name,
      fireTimeMs,
      jobChangeHash(app, job, choice.scheduleIndex),
    );
    runKeyText = runKey;
    fireTime = fireTimeMs;
    reports = await openFireReports(s, deps, spec, {
      runId,
      runKey,
      app,
      job: job.name,
      scheduleIndex: choice.scheduleIndex,
      scheduledTime: fireTimeMs,
      host: s.hostId,
      startedAt: started,
    });
    const { secrets, secretEnv, headerSecrets } = resolveSecrets(spec, deps);
    const scope = job.policy.concurrency_scope;
    logger.bind({ run_key: runKey, scope });
    logger.log('info', 'fire-start', `firing ${app}.${job.name} for ${rfc3339Utc(fireTimeMs)}`, {
      fire_time: Math.floor(fireTimeMs / 1000),
      policy: job.policy.concurrency,
      kind: job.command === undefined ? 'http' : 'command',
    });

    state = new HostState(s.stateDir, s.target);
    state.ensure();
    if ((job.notify ?? []).length > 0) {
      // loaded only for a job with notifications: the shim starts once per fire
      const { ShimNotifications } = await import('./notify.js');
      notes = new ShimNotifications(
        app,
        job,
        spec.notifiers,
        join(s.stateDir, s.target),
        deps.env,
        (level, msg, fields) => logger.log(level, 'notify', msg, fields),
        () => clock.now(),
      );
      const running = (): RunFacts => ({
        id: runId,
        runKey,
        trigger: 'schedule',
        scheduledTime: fireTimeMs,
        startedAt: started,
        endedAt: null,
        outcome: null,
        attempts: 0,
        lastStatus: null,
        error: null,
      });
      notes.started(running);
    }
    const opened = await openScope(scope, s, state);
    backend = opened.backend;
    const records = opened.records;
    const previousSuccessMs = await records.lastSuccess();
    lastSuccessMs = previousSuccessMs;

    const guard = createGuard({
      backend: job.policy.concurrency === 'Allow' ? null : backend,
      dedupe: records,
      key: s.target,
      runKey,
      ttlMs: lockTtlMs(job.policy.timeout_seconds),
      policy: job.policy.concurrency as 'Allow' | 'Forbid' | 'Replace',
      timeoutSeconds: job.policy.timeout_seconds,
      stopGraceSeconds: attemptStopSeconds(job),
      self: { pid: process.pid, host: s.hostId, acquiredAt: started },
      clock,
      onReplaced: (h) =>
        logger.log(
          'info',
          'replaced-holder',
          `replaced previous holder pid ${h.pid} on ${h.host}`,
          {
            holder_pid: h.pid,
          },
        ),
      ...(deps.signal ? { signal: deps.signal } : {}),
      onRefreshError: (err) =>
        logger.log('warn', 'attempt', `lock refresh failed: ${err.message}`, { err: err.message }),
    });
    if (job.command !== undefined) {
      command = await commandDeps(job, {
        ...deps,
        secretEnv,
        ...(reports ? { wrapOutput: reports.tail.bind(reports) } : {}),
      });
    } else {
      transport =
        deps.transport ?? (await import('../fire/http-transport.js')).createHttpTransport();
    }
    tracer = await runTracer(deps.env, 'cronix-shim');
    result = await runFire(
      {
        app,
        job,
        runId,
        runKey,
        fireTimeMs,
        actualTimeMs: started,
        secrets,
        headerSecrets,
        previousSuccessMs,
      },
      {
        ...(transport ? { transport } : {}),
        ...(command ? { command } : {}),
        clock,
        guard,
        ...(deps.signal ? { signal: deps.signal } : {}),
        onEvent: (e) => {
          logFireEvent(logger, e, stopCause(deps.signal));
          if (tracer !== null && e.attempt !== undefined && e.durationMs !== undefined) {
            traced.push({
              attempt: e.attempt,
              startMs: clock.now() - e.durationMs,
              durationMs: e.durationMs,
              status: e.status ?? null,
              error: e.err ?? null,
              traceparent: e.traceparent ?? null,
            });
          }
          reports?.onEvent(e);
        },
        // under the lock, before it is released: the next holder must see this success
        record: async ({ outcome: ending }) => {
          if (ending !== 'success') return;
          lastSuccessMs = clock.now();
          await records.markSucceeded(runKey, lastSuccessMs);
        },
      },
    );
    outcome = result.outcome;
    errorText = result.message ?? null;
  } catch (err) {
    const f = failure(err);
    outcome = f.outcome;
    errorText = f.message;
    logger.log('error', f.event, f.message, { err: f.message });
  } finally {
    command?.end();
    if (deps.transport === undefined) await transport?.close?.().catch(() => undefined);
    await backend?.close().catch(() => undefined);
  }
  const exitCode =
    outcome === 'internal-error' ? SHIM_EXIT.internal : exitCodeFor(outcome, s.contendedExit);
  // best effort, bounded, after the outcome is final: never changes the exit code
  const reported = reports?.finish({ outcome, exitCode, result, error: errorText });
  await notes?.finished(shimEvent(outcome), {
    id: runId,
    runKey: runKeyText,
    trigger: 'schedule',
    scheduledTime: fireTime,
    startedAt: started,
    endedAt: clock.now(),
    outcome: outcome.replace(/-/g, '_'),
    attempts: result?.attempts ?? 0,
    lastStatus: result?.lastStatus ?? null,
    error: outcome === 'success' ? null : errorText,
  });
  if (tracer !== null) {
    tracer.record({
      runId,
      runKey: runKeyText,
      job: `${app}/${jobName}`,
      outcome: outcome.replace(/-/g, '_'),
      trigger: 'schedule',
      leaderEpoch: null,
      startMs: started,
      endMs: clock.now(),
      attempts: traced,
    });
    await tracer.shutdown();
  }
  if (s.metricsDir !== undefined && state !== undefined && jobName !== '') {
    try {
      writeTextfile(s.metricsDir, {
        app,
        job: jobName,
        outcome,
        attempts: result?.attempts ?? 0,
        durationSeconds: (clock.now() - started) / 1000,
        lastSuccessMs,
        firedAtMs: started,
        fires: state.countFire(),
      });
    } catch (err) {
      logger.log(
        'warn',
        'metrics',
        `could not write the metrics textfile in ${s.metricsDir}: ${(err as Error).message}`,
      );
    }
  }
  await reported;
  return exitCode;
}
