/**
 * Reading the identifiers cronix sends with every trigger attempt (SPEC §5.7),
 * so apps can dedupe on the run key and log the run id and attempt.
 */

import { TRIGGER_HEADERS } from '../contract/run.js';

export { TRIGGER_HEADERS };

/** Trigger identifiers of one attempt; absent or unparsable headers are `null`. */
export interface TriggerInfo {
  runId: string | null;
  /** `<app>/<job>#<fire time>#<change hash>`; stable across attempts and duplicate fires. */
  runKey: string | null;
  /** Job name. */
  scheduleName: string | null;
  /** 1-based attempt number within the fire. */
  attempt: number | null;
  /** Intended fire time, Unix seconds. */
  fireTime: number | null;
  /** When the firing process started, Unix seconds. */
  fireTimeActual: number | null;
  /** Last successful fire, Unix seconds, when known. */
  previousSuccessTime: number | null;
  /** Monotonic fencing token (global scope only). */
  fencingToken: number | null;
  /** The sending daemon leader's epoch (daemon replicas on PostgreSQL only). */
  leaderEpoch: number | null;
}

/**
 * Headers as the frameworks hand them over: a Fetch `Headers`, or Node's
 * `IncomingHttpHeaders` (lower-case names; a repeated header is an array).
 */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/** One header's value from either kind of {@link HeaderSource}; `null` when absent. */
export function headerValue(headers: HeaderSource, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  const v = headers[name.toLowerCase()];
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(', ') : v;
}

function integer(value: string | null): number | null {
  if (value === null || !/^-?[0-9]{1,16}$/.test(value.trim())) return null;
  const n = Number(value.trim());
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * Extracts the trigger identifiers from a request's headers (a Fetch `Request`, or
 * anything with Node-style `headers`, such as Express's and Fastify's requests). Does not verify
 * anything: call `verifyRequest` first and trust these only when it passed.
 */
export function triggerInfo(request: Request | { headers: HeaderSource }): TriggerInfo {
  const h = (name: string): string | null => headerValue(request.headers, name);
  return {
    runId: h(TRIGGER_HEADERS.runId),
    runKey: h(TRIGGER_HEADERS.runKey) ?? h(TRIGGER_HEADERS.idempotencyKey),
    scheduleName: h(TRIGGER_HEADERS.scheduleName),
    attempt: integer(h(TRIGGER_HEADERS.attempt)),
    fireTime: integer(h(TRIGGER_HEADERS.fireTime)),
    fireTimeActual: integer(h(TRIGGER_HEADERS.fireTimeActual)),
    previousSuccessTime: integer(h(TRIGGER_HEADERS.previousSuccessTime)),
    fencingToken: integer(h(TRIGGER_HEADERS.fencingToken)),
    leaderEpoch: integer(h(TRIGGER_HEADERS.leaderEpoch)),
  };
}
