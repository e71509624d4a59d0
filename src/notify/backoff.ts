/**
 * When to try a notification delivery again (SPEC §12): exponential backoff from 1 s doubling
 * to at most 60 s, a server's `Retry-After` when it gives one, and never past the delivery
 * horizon of 10 minutes after the event. Pure.
 */

/** How long a notification is retried after its event, in ms. */
export const DELIVERY_HORIZON_MS = 10 * 60_000;
/** First retry delay, in ms. */
export const FIRST_RETRY_MS = 1000;
/** Largest retry delay without a `Retry-After`, in ms. */
export const MAX_RETRY_MS = 60_000;

/**
 * Parses a `Retry-After` value (delay-seconds or an HTTP date) into ms from `now`; null when
 * absent or unreadable. Negative dates give 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * The instant of the next attempt after `attempts` failed ones, or null when it would fall
 * past the horizon (the delivery is given up). `retryAfterMs` (from the server) wins over the
 * backoff when given.
 */
export function nextAttemptAt(
  createdAt: number,
  attempts: number,
  now: number,
  retryAfterMs: number | null,
): number | null {
  const backoff = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  const at = now + (retryAfterMs ?? backoff);
  return at > createdAt + DELIVERY_HORIZON_MS ? null : at;
}
