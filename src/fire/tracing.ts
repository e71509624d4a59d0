/**
 * Traces of runs (issue 29): with `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, the shim and the daemon export one span per run and
 * one per attempt over OTLP/HTTP. The attempt span is the parent of the `traceparent` the attempt
 * sent (its span id is that header's), and the run's trace id is the run id's, as in the header.
 *
 * This module is the seam and holds no OpenTelemetry code: without the variable nothing is
 * imported (the shim starts once per fire; its start-up is measured in BENCHMARKS.md). The SDK
 * lives in `otel.ts`, imported on demand.
 */

import type { RunTracer } from './trace-types.js';

export type { AttemptTrace, RunTrace, RunTracer } from './trace-types.js';

/** Whether the environment asks for traces. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
}

/**
 * The tracer for this process, or null when the environment does not ask for one (then nothing
 * is loaded). `service` names the OpenTelemetry service (`cronix-shim`, `cronix-daemon`) unless
 * `OTEL_SERVICE_NAME` does.
 */
export async function runTracer(
  env: NodeJS.ProcessEnv,
  service: string,
): Promise<RunTracer | null> {
  if (!tracingWanted(env)) return null;
  const { createRunTracer } = await import('./otel.js');
  return createRunTracer(env['OTEL_SERVICE_NAME'] || service);
}
