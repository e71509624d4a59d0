/**
 * Verifying a trigger that arrives as a Node `IncomingMessage` (Express, Fastify, plain
 * `node:http`): the raw body bytes are what was signed, so the adapters hand them over here
 * together with the request target exactly as received.
 */
import { SIGNATURE_HEADER, verify, type VerifyFailure } from '../contract/signature.js';
import { headerValue, triggerInfo, type HeaderSource, type TriggerInfo } from './trigger.js';
import { systemNowSeconds, type VerifyRequestOptions } from './verify.js';

/** What an adapter attaches to a verified request (`req.cronix`, `request.cronix`, `c.get('cronix')`). */
export interface CronixContext {
  /** The trigger identifiers of the attempt (run key, attempt, fencing token, leader epoch …). */
  trigger: TriggerInfo;
  /** Which of the configured secrets matched (0 = the first; > 0 = an old one during rotation). */
  secretIndex: number;
  /** The signature's timestamp, Unix seconds. */
  timestamp: number;
}

/** Options of the Node adapters (Express, Fastify). */
export interface NodeAdapterOptions extends VerifyRequestOptions {
  /** Largest body read, in bytes; a longer one is answered 413. Default 1 MiB. */
  maxBodyBytes?: number;
}

/** Default {@link NodeAdapterOptions.maxBodyBytes}. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** A received request as the signer saw it. */
export interface ReceivedRequest {
  method: string;
  /** The request target as received: path and query (`req.originalUrl` / `req.url`). */
  target: string;
  headers: HeaderSource;
  /** The raw body bytes; `undefined` or empty for none. */
  body: Uint8Array | undefined;
}

/** Verifies a received request; on success also returns the context to attach. */
export function verifyReceived(
  request: ReceivedRequest,
  opts: VerifyRequestOptions,
): { ok: true; context: CronixContext } | VerifyFailure {
  const result = verify({
    header: headerValue(request.headers, SIGNATURE_HEADER),
    secrets: opts.secrets,
    method: request.method,
    path: request.target,
    body: request.body,
    now: (opts.now ?? systemNowSeconds)(),
    ...(opts.maxSkewSeconds === undefined ? {} : { maxSkewSeconds: opts.maxSkewSeconds }),
  });
  if (!result.ok) return result;
  return {
    ok: true,
    context: {
      trigger: triggerInfo({ headers: request.headers }),
      secretIndex: result.secretIndex,
      timestamp: result.timestamp,
    },
  };
}

/** The JSON error body the adapters answer with (the same shape as a 401's). */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** Thrown by {@link readBody} when the body is longer than allowed. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Reads a whole byte stream (a request body) up to `limit` bytes. */
export async function readBody(stream: AsyncIterable<unknown>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    size += b.length;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}
