/**
 * Seams of the per-fire engine: the transport that sends one HTTP attempt
 * and the clock that tells time and sleeps. Both are injected, so the shim and
 * the daemon run the same engine and tests run it on a fake clock.
 */

/** One HTTP attempt as sent on the wire. */
export interface TransportRequest {
  method: string;
  url: string;
  /** Final headers (static headers, then the injected `X-Cron-*` ones). */
  headers: Record<string, string>;
  /** Body bytes, sent verbatim (empty string = no body). */
  body: string;
}

/** Options of one attempt. */
export interface SendOptions {
  /** The attempt's deadline in ms from now: the connection is closed at the deadline. */
  timeoutMs: number;
  /** Response body bytes to keep (64 KiB); the rest is not read. */
  maxBodyBytes: number;
  /** Aborts the attempt (daemon Replace / cancel, shim SIGTERM). */
  signal?: AbortSignal;
}

/** What one attempt produced. Never an exception. */
export type TransportResult =
  | { kind: 'response'; status: number; bodyExcerpt: string; location?: string }
  | { kind: 'network-error'; message: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

/** Sends one attempt. Redirects are not followed; the body read is capped. */
export interface Transport {
  send(request: TransportRequest, options: SendOptions): Promise<TransportResult>;
  /** Closes pooled connections. */
  close?(): Promise<void>;
}

/** Time, injected. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Sleeps `ms`; resolves early (false) when `signal` aborts, true otherwise. */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean>;
}
