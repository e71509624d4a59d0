/** The seam between a notification and the world: one delivery attempt and its result. */

/** What one delivery attempt did. */
export type DeliveryResult =
  | { ok: true; status: number | null }
  | {
      ok: false;
      /** True when trying again cannot help (a 4xx other than 408/429, a 5xx SMTP reply). */
      permanent: boolean;
      status: number | null;
      /** Short reason, never a secret or a URL path. */
      error: string;
      /** The server's `Retry-After`, in ms, when it gave one. */
      retryAfterMs: number | null;
    };

/** One attempt to deliver a notification body; never throws. */
export type Deliver = (body: string, notificationId: string) => Promise<DeliveryResult>;

/** Deadline of one delivery attempt, in ms: a dead notifier costs at most this per attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;
