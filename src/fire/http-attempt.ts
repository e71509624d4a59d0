/**
 * One attempt of an HTTP job (SPEC §5.6–5.7) for the per-fire engine: its headers (static ones
 * first, then the injected `X-Cron-*` ones, signed at send time) and how its end is classified.
 */
import {
  MAX_RESPONSE_BODY_BYTES,
  TRIGGER_HEADERS,
  classifyStatus,
  type AttemptClass,
} from '../contract/run.js';
import { sign } from '../contract/signature.js';
import type { AttemptCall, AttemptEnd, FireInput } from './attempt.js';
import { traceparent } from './ids.js';
import type { Clock, Transport, TransportRequest, TransportResult } from './types.js';
import { requestTarget } from './url-target.js';

const INJECTED = new Set(Object.values(TRIGGER_HEADERS).map((h) => h.toLowerCase()));

/** Copies the headers a job may set (not the injected ones) into `to`. */
function copyHeaders(from: Readonly<Record<string, string>>, to: Record<string, string>): void {
  for (const name in from) {
    if (!INJECTED.has(name.toLowerCase())) to[name] = from[name] as string;
  }
}

/**
 * Headers of one attempt: static headers first, then those from secrets
 * (`request.headers_from_secrets`, resolved by the caller), then the injected ones, which win.
 */
export function attemptHeaders(
  input: FireInput,
  attempt: number,
  sentAtMs: number,
  fencingToken: number | undefined,
): Record<string, string> {
  const request = input.job.request;
  if (request === undefined) throw new Error(`job ${input.job.name} has no request`);
  const headers: Record<string, string> = {};
  copyHeaders(request.headers, headers);
  if (input.headerSecrets !== undefined) copyHeaders(input.headerSecrets, headers);
  const seconds = (ms: number): string => String(Math.floor(ms / 1000));
  headers[TRIGGER_HEADERS.runId] = input.runId;
  headers[TRIGGER_HEADERS.runKey] = input.runKey;
  headers[TRIGGER_HEADERS.idempotencyKey] = input.runKey;
  headers[TRIGGER_HEADERS.scheduleName] = input.job.name;
  headers[TRIGGER_HEADERS.fireTime] = seconds(input.fireTimeMs);
  headers[TRIGGER_HEADERS.fireTimeActual] = seconds(input.actualTimeMs);
  headers[TRIGGER_HEADERS.attempt] = String(attempt);
  if (input.previousSuccessMs !== null) {
    headers[TRIGGER_HEADERS.previousSuccessTime] = seconds(input.previousSuccessMs);
  }
  if (fencingToken !== undefined) headers[TRIGGER_HEADERS.fencingToken] = String(fencingToken);
  if (input.leaderEpoch !== undefined)
    headers[TRIGGER_HEADERS.leaderEpoch] = String(input.leaderEpoch);
  headers[TRIGGER_HEADERS.traceparent] = traceparent(input.runId);
  const secret = input.secrets[0];
  if (secret !== undefined) {
    headers[TRIGGER_HEADERS.signature] = sign({
      secret,
      method: request.method,
      path: requestTarget(request.url),
      body: request.body,
      timestamp: Math.floor(sentAtMs / 1000),
    });
  }
  return headers;
}

/** How an HTTP attempt ended, for the loop; a lost hold counts as a failed attempt. */
export function httpEnd(
  result: TransportResult,
  timeoutSeconds: number,
  lostHold: boolean,
): AttemptEnd {
  switch (result.kind) {
    case 'response': {
      const cls: AttemptClass = classifyStatus(result.status);
      const end: AttemptEnd = { cls, status: result.status, bodyExcerpt: result.bodyExcerpt };
      if (cls === 'success' && result.runOnce === 'duplicate') end.duplicate = true;
      return end;
    }
    case 'network-error':
      return { cls: 'network-error', err: result.message };
    case 'timeout':
      return { cls: 'timeout', err: `timeout after ${timeoutSeconds}s` };
    case 'aborted':
      // the hold was lost mid-attempt: count it as a failed attempt and re-take the lock
      return lostHold
        ? { cls: 'network-error', err: 'lock lost during the attempt; connection closed' }
        : { cls: 'aborted' };
  }
}

/** Sends one HTTP attempt. */
export async function sendHttp(
  input: FireInput,
  deps: { transport: Transport; clock: Clock },
  call: AttemptCall,
): Promise<AttemptEnd> {
  const request = input.job.request;
  if (request === undefined) return { cls: 'aborted' }; // unreachable: callers check the kind
  const timeoutSeconds = input.job.policy.timeout_seconds;
  const headers = attemptHeaders(input, call.attempt, deps.clock.now(), call.fencingToken);
  const sent: TransportRequest = {
    method: request.method,
    url: request.url,
    headers,
    body: request.body,
  };
  const result = await deps.transport.send(sent, {
    timeoutMs: timeoutSeconds * 1000,
    maxBodyBytes: MAX_RESPONSE_BODY_BYTES,
    ...(call.signal ? { signal: call.signal } : {}),
  });
  const end = httpEnd(result, timeoutSeconds, !call.stopped());
  end.traceparent = headers[TRIGGER_HEADERS.traceparent] as string;
  return end;
}
