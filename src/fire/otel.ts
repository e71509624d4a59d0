/**
 * The OpenTelemetry half of run traces (see `tracing.ts`), imported only when traces are asked
 * for. Spans are made when a run has ended, from what it recorded — start times, durations,
 * statuses and the `traceparent` of each attempt — so the hot path of a fire carries no tracing
 * code. The ids are not the SDK's random ones: the trace id is the run id (as in the header) and
 * an attempt's span id is the one its `traceparent` carried, so the app's server span, whose
 * parent is that header, hangs under the attempt span.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  RandomIdGenerator,
  type IdGenerator,
} from '@opentelemetry/sdk-trace-base';
import type { RunTrace, RunTracer } from './trace-types.js';

/** Hands out the ids set for the next span; random ones when none is set. */
class PresetIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  traceId: string | null = null;
  spanId: string | null = null;
  generateTraceId(): string {
    const id = this.traceId ?? this.random.generateTraceId();
    this.traceId = null;
    return id;
  }
  generateSpanId(): string {
    const id = this.spanId ?? this.random.generateSpanId();
    this.spanId = null;
    return id;
  }
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const FAILED = new Set(['app_rejected', 'retries_exhausted', 'crashed', 'internal_error']);

/** A tracer exporting to `$OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` over OTLP/HTTP. */
export function createRunTracer(service: string): RunTracer {
  const ids = new PresetIds();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    idGenerator: ids,
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 1000 }),
    ],
  });
  const tracer = provider.getTracer('cronix');
  return {
    record(run: RunTrace): void {
      const common = {
        'cronix.job': run.job,
        'cronix.run_key': run.runKey,
        'cronix.run_id': run.runId,
        ...(run.leaderEpoch !== null ? { 'cronix.leader_epoch': run.leaderEpoch } : {}),
      };
      ids.traceId = run.runId.replace(/-/g, '');
      const runSpan = tracer.startSpan(
        `cronix run ${run.job}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: run.startMs,
          attributes: {
            ...common,
            'cronix.outcome': run.outcome,
            'cronix.trigger': run.trigger,
            'cronix.attempts': run.attempts.length,
          },
        },
        ROOT_CONTEXT,
      );
      const parent = trace.setSpan(ROOT_CONTEXT, runSpan);
      for (const a of run.attempts) {
        const sent = a.traceparent === null ? null : TRACEPARENT.exec(a.traceparent);
        if (sent) ids.spanId = sent[2] as string;
        const span = tracer.startSpan(
          `cronix attempt ${run.job}`,
          {
            kind: SpanKind.CLIENT,
            startTime: a.startMs,
            attributes: {
              ...common,
              'cronix.attempt': a.attempt,
              ...(a.status !== null ? { 'http.response.status_code': a.status } : {}),
            },
          },
          parent,
        );
        const ok = a.error === null && (a.status === null || a.status < 400);
        if (!ok)
          span.setStatus({ code: SpanStatusCode.ERROR, message: a.error ?? `HTTP ${a.status}` });
        span.end(a.startMs + a.durationMs);
      }
      if (FAILED.has(run.outcome))
        runSpan.setStatus({ code: SpanStatusCode.ERROR, message: run.outcome });
      runSpan.end(Math.max(run.endMs, run.startMs));
    },
    async shutdown(): Promise<void> {
      const limit = new Promise<void>((resolve) => setTimeout(resolve, 5000).unref());
      await Promise.race([provider.shutdown().catch(() => undefined), limit]);
    },
  };
}
