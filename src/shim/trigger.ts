/**
 * `cronix trigger <app>.<job>` (SPEC §5): load the spec, resolve secrets,
 * compute the fire time and run key, then run the shared per-fire engine
 * under the lock, record the outcome and return the exit code.
 */
import { jobChangeHash } from '../contract/manifest/change-hash.js';
import {
  exitCodeFor,
  lockTtlMs,
  parseInstant,
  runKey as makeRunKey,
  SHIM_EXIT,
  type FireOutcome,
} from '../contract/run.js';
import { previousFire } from '../contract/schedule/index.js';
import { runFire, type FireResult } from '../fire/engine.js';
import { uuidv7 } from '../fire/ids.js';
import type { Clock, Transport } from '../fire/types.js';
import { LockConfigError, LockUnavailableError, type LockBackend } from '../locks/types.js';
import { resolveSecretRefs } from '../secrets/resolve.js';
import { createGuard } from './guard.js';
import type { ShimLogger } from './log.js';
import { logFireEvent } from './log.js';
import { writeTextfile } from './metrics.js';
import { loadSpec, SpecError } from './spec.js';
import { HostState, type RunRecords } from './state.js';

/** Resolved settings of one invocation (flags, then environment, then defaults). */
export interface TriggerSettings {
  target: string;
  specDir: string;
  lockDir: string;
  stateDir: string;
  /** `redis://…` for global scope. */
  redisUrl: string | undefined;
  redisPrefix: string;
  fireTime: string | undefined;
  contendedExit: 4 | 75;
  metricsDir: string | undefined;
  hostId: string;
}

/** Injected dependencies (real ones by default). */
export interface TriggerDeps {
  env: NodeJS.ProcessEnv;
  clock: Clock;
  transport?: Transport;
  logger: ShimLogger;
  signal?: AbortSignal;
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

/** The lock backend of a scope and where its run records live (lazily imported: Redis costs start-up time). */
async function openScope(
  scope: 'host' | 'global',
  s: TriggerSettings,
  state: HostState,
): Promise<{ backend: LockBackend; records: RunRecords }> {
  if (scope === 'host') {
    const { FlockBackend } = await import('../locks/flock.js');
    return { backend: new FlockBackend(s.lockDir), records: state };
  }
  if (!s.redisUrl) {
    throw new Early(
      'internal-error',
      'global scope needs a Redis lock backend: pass --lock-backend redis://host:6379 or set CRONIX_REDIS_URL',
    );
  }
  const { RedisBackend } = await import('../locks/redis.js');
  const redis = await RedisBackend.connect(s.redisUrl, { prefix: s.redisPrefix });
  return {
    backend: redis,
    records: {
      hasSucceeded: (runKey) => redis.hasSucceeded(runKey),
      markSucceeded: (runKey, atMs) => redis.markSucceeded(runKey, atMs, s.target),
      lastSuccess: () => redis.lastSuccess(s.target),
    },
  };
}

/** Runs one fire and returns the process exit code. */
export async function trigger(s: TriggerSettings, deps: TriggerDeps): Promise<number> {
  const { clock, logger } = deps;
  const started = clock.now();
  const runId = uuidv7(started);
  logger.bind({ run_id: runId });
  let backend: LockBackend | null = null;
  let outcome: FireOutcome = 'internal-error';
  let result: FireResult | undefined;
  let state: HostState | undefined;
  let records: RunRecords | undefined;
  let lastSuccessMs: number | null = null;
  let app = s.target;
  let jobName = '';
  try {
    const spec = await loadSpec(s.specDir, s.target).catch((err: unknown) => {
      throw err instanceof SpecError ? new Early('internal-error', err.message) : err;
    });
    const { job } = spec;
    app = spec.app;
    jobName = job.name;
    logger.bind({ app, job: job.name });
    const concurrency = job.policy.concurrency;
    if (concurrency === 'Enqueue') {
      throw new Early(
        'internal-error',
        'policy.concurrency "Enqueue" needs the daemon (cronix serve); the shim cannot queue fires',
      );
    }
    const secrets = resolveSecretRefs(spec.secretRefs, { env: deps.env });
    if (secrets.secrets.length === 0) {
      const why = secrets.unresolved.map((u) => `${u.ref}: ${u.reason}`).join('; ');
      throw new Early(
        'internal-error',
        `no secret resolved (${why || 'the job has no secret_refs'}); requests must be signed`,
      );
    }
    logger.redactSecrets(secrets.secrets);

    // Every schedule of a job shares one spec file (one per <app>.<job>): the schedule that
    // fired is the one whose instant this is (lowest index on ties); `schedule_index` is the
    // fallback for a --fire-time that matches none.
    let fireTimeMs: number | null = null;
    let scheduleIndex = spec.scheduleIndex;
    if (s.fireTime !== undefined) {
      fireTimeMs = parseInstant(s.fireTime);
      if (fireTimeMs === null) {
        throw new Early(
          'internal-error',
          `--fire-time: expected RFC 3339 or Unix seconds, found ${JSON.stringify(s.fireTime)}`,
        );
      }
      const at = fireTimeMs;
      const k = spec.schedules.findIndex((sc) => previousFire(sc, job.timezone, at) === at);
      if (k >= 0 && spec.schedules.length > 1) scheduleIndex = k;
    } else {
      for (const [k, sc] of spec.schedules.entries()) {
        const t = previousFire(sc, job.timezone, started + 1000);
        if (t !== null && (fireTimeMs === null || t > fireTimeMs)) {
          fireTimeMs = t;
          scheduleIndex = k;
        }
      }
      if (fireTimeMs === null)
        throw new Early('internal-error', `the job's schedules have no fire before now`);
    }
    const runKey = makeRunKey(app, job.name, fireTimeMs, jobChangeHash(app, job, scheduleIndex));
    const scope = job.policy.concurrency_scope;
    logger.bind({ run_key: runKey, scope });
    logger.log(
      'info',
      'fire-start',
      `firing ${app}.${job.name} for ${new Date(fireTimeMs).toISOString()}`,
      {
        fire_time: Math.floor(fireTimeMs / 1000),
        policy: concurrency,
      },
    );

    state = new HostState(s.stateDir, s.target);
    state.ensure();
    const opened = await openScope(scope, s, state);
    backend = opened.backend;
    records = opened.records;
    const previousSuccessMs = await records.lastSuccess();
    lastSuccessMs = previousSuccessMs;

    const guard = createGuard({
      backend: concurrency === 'Allow' ? null : backend,
      dedupe: records,
      key: s.target,
      runKey,
      ttlMs: lockTtlMs(job.policy.timeout_seconds),
      policy: concurrency,
      timeoutSeconds: job.policy.timeout_seconds,
      self: { pid: process.pid, host: s.hostId, acquiredAt: started },
      clock,
      onReplaced: (h) =>
        logger.log(
          'info',
          'replaced-holder',
          `replaced previous holder pid ${h.pid} on ${h.host}`,
          { holder_pid: h.pid },
        ),
      onRefreshError: (err) =>
        logger.log('warn', 'attempt', `lock refresh failed: ${err.message}`, { err: err.message }),
    });
    const transport =
      deps.transport ?? (await import('../fire/http-transport.js')).createHttpTransport();
    result = await runFire(
      {
        app,
        job,
        runId,
        runKey,
        fireTimeMs,
        actualTimeMs: started,
        secrets: secrets.secrets,
        previousSuccessMs,
      },
      {
        transport,
        clock,
        guard,
        ...(deps.signal ? { signal: deps.signal } : {}),
        onEvent: (e) => logFireEvent(logger, e),
      },
    );
    outcome = result.outcome;
    if (outcome === 'success') {
      const now = clock.now();
      lastSuccessMs = now;
      try {
        await records.markSucceeded(runKey, now);
      } catch (err) {
        logger.log(
          'warn',
          'success',
          `could not record the success for duplicate suppression: ${(err as Error).message}`,
        );
      }
    }
  } catch (err) {
    if (err instanceof Early) {
      outcome = err.outcome;
    } else if (err instanceof LockUnavailableError) {
      outcome = 'lock-unavailable';
    } else if (err instanceof LockConfigError) {
      outcome = 'internal-error';
    } else {
      outcome = 'internal-error';
    }
    const event = outcome === 'lock-unavailable' ? 'lock-unavailable' : 'internal-error';
    logger.log('error', event, (err as Error).message, { err: (err as Error).message });
  } finally {
    await backend?.close().catch(() => undefined);
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
  return outcome === 'internal-error' ? SHIM_EXIT.internal : exitCodeFor(outcome, s.contendedExit);
}
