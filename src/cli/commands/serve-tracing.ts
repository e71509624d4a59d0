/**
 * Run traces of `cronix serve` (see src/fire/tracing.ts): with `OTEL_EXPORTER_OTLP_ENDPOINT`
 * set, every run this daemon ends becomes a run span and one span per attempt, made from the
 * run's record, with the leader epoch it ran under. Nothing is loaded otherwise.
 */
import type { Registry } from 'prom-client';
import type { DaemonEvents } from '../../daemon/events.js';
import type { Scheduler } from '../../daemon/scheduler.js';
import { runTracer, type RunTracer } from '../../fire/tracing.js';

/** The daemon's tracer, or null when traces are not asked for. */
export function daemonTracer(env: NodeJS.ProcessEnv): Promise<RunTracer | null> {
  return runTracer(env, 'cronix-daemon');
}

/** The leader epoch as this replica's metrics last saw it; null on a single daemon. */
async function epochOf(registry: Registry | undefined): Promise<number | null> {
  const metric = registry?.getSingleMetric('cronix_leader_epoch');
  const value = (await metric?.get())?.values[0]?.value;
  return typeof value === 'number' && value > 0 ? value : null;
}

/** Exports every run that ends from now on. */
export function traceRuns(
  tracer: RunTracer,
  events: Scheduler['events'],
  registry: () => Registry | undefined,
): void {
  events.on('run-ended', (run: DaemonEvents['run-ended'][0]) => {
    void epochOf(registry()).then((leaderEpoch) =>
      tracer.record({
        runId: run.id,
        runKey: run.runKey,
        job: `${run.app}/${run.job}`,
        outcome: run.outcome ?? 'internal_error',
        trigger: run.trigger,
        leaderEpoch,
        startMs: run.startedAt ?? run.createdAt,
        endMs: run.endedAt ?? run.startedAt ?? run.createdAt,
        attempts: run.attemptLog.map((a) => ({
          attempt: a.attempt,
          startMs: a.startedAt,
          durationMs: a.durationMs,
          status: a.status,
          error: a.error,
          traceparent: a.traceparent ?? null,
        })),
      }),
    );
  });
}
