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
}

function integer(value: string | null): number | null {
  if (value === null || !/^-?[0-9]{1,16}$/.test(value.trim())) return null;
  const n = Number(value.trim());
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * Extracts the trigger identifiers from a request's headers. Does not verify
 * anything: call `verifyRequest` first and trust these only when it passed.
 */
export function triggerInfo(request: Request): TriggerInfo {
  const h = request.headers;
  return {
    runId: h.get(TRIGGER_HEADERS.runId),
    runKey: h.get(TRIGGER_HEADERS.runKey) ?? h.get(TRIGGER_HEADERS.idempotencyKey),
    scheduleName: h.get(TRIGGER_HEADERS.scheduleName),
    attempt: integer(h.get(TRIGGER_HEADERS.attempt)),
    fireTime: integer(h.get(TRIGGER_HEADERS.fireTime)),
    fireTimeActual: integer(h.get(TRIGGER_HEADERS.fireTimeActual)),
    previousSuccessTime: integer(h.get(TRIGGER_HEADERS.previousSuccessTime)),
    fencingToken: integer(h.get(TRIGGER_HEADERS.fencingToken)),
  };
}
