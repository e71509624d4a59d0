/**
 * What the daemon's and the shim's HTTP transports share: the header block they send, the
 * deadline timer's bound, and how an error becomes a short `network-error` message.
 */
import type { TransportRequest, TransportResult } from './types.js';
import type { UrlTarget } from './url-target.js';
import { RUN_ONCE_HEADER } from '../contract/run.js';

/** Headers the transport owns: the body framing is computed from the body itself. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding']);

/** Methods node sends without a body framing header when the body is empty. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/** Longest single `setTimeout` delay node accepts; longer deadlines re-arm. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The app's `X-Cron-Run-Once` answer, as node names incoming headers. */
export const RUN_ONCE = RUN_ONCE_HEADER.toLowerCase();

/** Longest `network-error` message kept, in characters. */
const MAX_ERROR_MESSAGE = 300;

/**
 * The request's header block as a flat raw list (`[name, value, …]`, written as given and
 * validated by the client, without a per-header `setHeader`): `Host` unless the request sets one, the
 * request's headers minus any framing headers, and `content-length` (0 for an empty body of a
 * method that may carry one, as node itself would send). The client adds `Connection`
 * (keep-alive or close). Names keep their case.
 */
export function requestHeaders(
  target: UrlTarget,
  request: TransportRequest,
  bodyBytes: number,
): string[] {
  const given = request.headers;
  const raw: string[] = [];
  let host = false;
  let authorization = false;
  for (const name in given) {
    const lower = name.toLowerCase();
    if (FRAMING_HEADERS.has(lower)) continue;
    if (lower === 'host') host = true;
    else if (lower === 'authorization') authorization = true;
    raw.push(name, given[name] as string);
  }
  if (!host) raw.push('Host', target.host);
  if (target.auth !== undefined && !authorization)
    raw.push('Authorization', `Basic ${Buffer.from(target.auth).toString('base64')}`);
  // as node does for a body-less end() of a method that may carry one: never chunked
  if (bodyBytes > 0 || !BODYLESS_METHODS.has(request.method.toUpperCase()))
    raw.push('content-length', String(bodyBytes));
  return raw;
}

/** A `network-error` result with a short message; `during` names the phase when not connect. */
export function networkError(err: unknown, during: string | undefined): TransportResult {
  const message = describeError(err);
  return {
    kind: 'network-error',
    message: during === undefined ? message : `${during}: ${message}`,
  };
}

/** `CODE: text` of an error, no stack, at most {@link MAX_ERROR_MESSAGE} characters. */
export function describeError(err: unknown): string {
  let code: string | undefined;
  let text: string;
  if (err instanceof Error) {
    code =
      typeof (err as NodeJS.ErrnoException).code === 'string'
        ? (err as NodeJS.ErrnoException).code
        : undefined;
    text = err.message;
    // Happy-eyeballs connects report an AggregateError with an empty message.
    if (text === '' && err instanceof AggregateError) {
      const first: unknown = err.errors[0];
      if (first instanceof Error) text = first.message;
    }
  } else {
    text = String(err);
  }
  const full =
    code !== undefined && !text.includes(code)
      ? `${code}: ${text}`
      : text || code || 'unknown error';
  return full.length > MAX_ERROR_MESSAGE ? `${full.slice(0, MAX_ERROR_MESSAGE - 1)}…` : full;
}
