/**
 * A webhook delivery (SPEC §12): one POST of the JSON body, signed with `X-Cron-Signature`
 * exactly like a trigger request (SPEC §4, the same `sign`) when the notifier has secrets,
 * under a deadline, redirects not followed. 2xx is delivered; 408, 429, 5xx, timeouts and
 * network errors are retried (with the server's `Retry-After`); any other status is permanent.
 * Errors name the status or the network cause, never the URL (it may itself be a secret).
 */
import { sign, SIGNATURE_HEADER } from '../contract/signature.js';
import { parseRetryAfter } from './backoff.js';
import { DELIVERY_TIMEOUT_MS, type Deliver, type DeliveryResult } from './types.js';

/** Header carrying the notification id, constant across retries, for receivers to dedupe. */
export const NOTIFICATION_ID_HEADER = 'X-Cron-Notification-Id';

/** What a webhook sender needs: the resolved URL and signing secrets (the first signs). */
export interface WebhookTarget {
  url: string;
  secrets: readonly string[];
  timeoutMs?: number;
  now?: () => number;
}

/** The reason of a failed fetch, without the URL. */
function networkReason(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
    return 'timeout';
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.message) return cause.message.replace(/https?:\/\/\S+/g, '<url>');
  if (cause?.code) return cause.code;
  return err instanceof Error ? err.message.replace(/https?:\/\/\S+/g, '<url>') : 'network error';
}

/** A {@link Deliver} for one webhook. */
export function webhookSender(target: WebhookTarget): Deliver {
  const now = target.now ?? Date.now;
  const timeoutMs = target.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return async (body, notificationId): Promise<DeliveryResult> => {
    const url = new URL(target.url);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'cronix-notify',
      [NOTIFICATION_ID_HEADER]: notificationId,
    };
    const secret = target.secrets[0];
    if (secret !== undefined)
      headers[SIGNATURE_HEADER] = sign({
        secret,
        method: 'POST',
        path: `${url.pathname}${url.search}`,
        body,
        timestamp: Math.floor(now() / 1000),
      });
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      // the body is not needed; read a little so the connection can be reused
      await res.body?.cancel().catch(() => undefined);
    } catch (err) {
      const reason = networkReason(err);
      return {
        ok: false,
        permanent: false,
        status: null,
        error: reason === 'timeout' ? `timeout after ${timeoutMs / 1000} s` : reason,
        retryAfterMs: null,
      };
    }
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
    return {
      ok: false,
      permanent: !retryable,
      status: res.status,
      error: `HTTP ${res.status}`,
      retryAfterMs: retryable ? parseRetryAfter(res.headers.get('retry-after'), now()) : null,
    };
  };
}
