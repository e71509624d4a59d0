/**
 * App side of request signing: verify an incoming trigger given as a Web
 * `Request`, and answer failures with a uniform 401.
 */
import {
  SIGNATURE_HEADER,
  verify,
  type VerifyErrorCode,
  type VerifyFailure,
  type VerifyResult,
} from '../contract/signature.js';

/** Options for {@link verifyRequest}. */
export interface VerifyRequestOptions {
  /** Accepted secret values (not refs), in rotation order. */
  secrets: readonly string[];
  /** Accepted clock distance in seconds; default 300, never below 30. */
  maxSkewSeconds?: number;
  /** Current Unix time in seconds; defaults to the system clock. */
  now?: () => number;
}

/** Current Unix time in whole seconds from the system clock. */
export function systemNowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Path and query of a request exactly as the signer saw it: `pathname + search`. */
export function pathAndQuery(request: Request): string {
  const url = new URL(request.url);
  return url.pathname + url.search;
}

/**
 * Verifies the `X-Cron-Signature` of an incoming request.
 *
 * The body is read from a clone, so the handler can still read
 * `request.body` afterwards. Failures are result values (never thrown);
 * it throws only when the body was already consumed before the call, which
 * is a programming error (the signed bytes are no longer available).
 */
export async function verifyRequest(
  request: Request,
  opts: VerifyRequestOptions,
): Promise<VerifyResult> {
  const header = request.headers.get(SIGNATURE_HEADER);
  const base = {
    header,
    secrets: opts.secrets,
    method: request.method,
    path: pathAndQuery(request),
    now: (opts.now ?? systemNowSeconds)(),
    ...(opts.maxSkewSeconds === undefined ? {} : { maxSkewSeconds: opts.maxSkewSeconds }),
  };
  // No header: nothing to check the body against, so skip reading it.
  if (header === null) return verify(base);
  if (request.bodyUsed) {
    throw new TypeError(
      'verifyRequest: the request body was already read; verify before reading it',
    );
  }
  const body =
    request.body === null ? undefined : new Uint8Array(await request.clone().arrayBuffer());
  return verify({ ...base, body });
}

/** JSON body of a 401 answer. */
export interface UnauthorizedBody {
  error: { code: VerifyErrorCode; message: string };
}

/**
 * Builds the 401 response for a failed verification:
 * `{"error":{"code":<code>,"message":<message>}}` with
 * `content-type: application/json`. The message never contains a secret.
 */
export function unauthorizedResponse(result: VerifyFailure): Response {
  const body: UnauthorizedBody = { error: { code: result.code, message: result.message } };
  return new Response(JSON.stringify(body), {
    status: 401,
    headers: { 'content-type': 'application/json' },
  });
}
