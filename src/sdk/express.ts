/**
 * Express (4 and 5) middleware: verifies the `X-Cron-Signature` of a trigger over the raw body
 * bytes, answers 401 when it fails, and attaches the trigger identifiers as `req.cronix`.
 *
 * The signature covers the body bytes exactly as sent, so the middleware needs them:
 * - mounted before any body parser (or on routes no parser matched), it reads the body itself,
 *   keeps the bytes as `req.rawBody` and sets `req.body` as `express.json()` / `express.text()`
 *   would (parsed JSON for a JSON content type, a string for `text/*`, else the bytes), so a
 *   parser mounted after it finds the body read and leaves it alone;
 * - mounted after `express.json({ verify: keepRawBody })` (or any body-parser with that hook),
 *   it uses the bytes the hook kept;
 * - mounted after a parser without the hook, the bytes are gone: it passes an error to `next`
 *   that says so, rather than verifying a re-serialization that is not what was signed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  BodyTooLargeError,
  DEFAULT_MAX_BODY_BYTES,
  errorBody,
  readBody,
  verifyReceived,
  type CronixContext,
  type NodeAdapterOptions,
} from './node-request.js';

/** The request fields the middleware reads and sets (Express's `Request` has all of them). */
export interface ExpressLikeRequest extends IncomingMessage {
  /** Express: the target before router mounts rewrote `url`. */
  originalUrl?: string;
  body?: unknown;
  /** The raw body bytes, set by {@link keepRawBody} or by the middleware. */
  rawBody?: Uint8Array;
  /** Set once the signature is verified. */
  cronix?: CronixContext;
  /** body-parser's "already parsed" flag. */
  _body?: boolean;
}

/**
 * body-parser's `verify` hook that keeps the raw bytes:
 * `app.use(express.json({ verify: keepRawBody }))`, so a cronix middleware mounted after the
 * parser can still check the signature.
 */
export function keepRawBody(req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  (req as ExpressLikeRequest).rawBody = buf;
}

function send(res: ServerResponse, status: number, code: string, message: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(errorBody(code, message));
}

function parsedBody(req: IncomingMessage, raw: Buffer): unknown {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (raw.length === 0) return type === '' ? undefined : type.startsWith('text/') ? '' : {};
  if (type === 'application/json' || type.endsWith('+json')) return JSON.parse(raw.toString());
  if (type.startsWith('text/')) return raw.toString();
  return raw;
}

async function handle(
  req: ExpressLikeRequest,
  res: ServerResponse,
  next: (err?: unknown) => void,
  opts: NodeAdapterOptions,
): Promise<void> {
  let body: Uint8Array | undefined = req.rawBody;
  let readHere = false;
  if (body === undefined) {
    if (req._body === true || req.readableEnded) {
      next(
        new Error(
          'cronix: the request body was read by a body parser mounted before this middleware, so the signed bytes are gone; mount the cronix middleware first, or give the parser { verify: keepRawBody }',
        ),
      );
      return;
    }
    try {
      body = await readBody(req, opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        send(res, 413, 'PayloadTooLarge', err.message);
        return;
      }
      next(err);
      return;
    }
    req.rawBody = body;
    readHere = true;
  }
  const verified = verifyReceived(
    {
      method: req.method ?? 'GET',
      target: req.originalUrl ?? req.url ?? '/',
      headers: req.headers,
      body,
    },
    opts,
  );
  if (!verified.ok) {
    send(res, 401, verified.code, verified.message);
    return;
  }
  if (readHere) {
    try {
      req.body = parsedBody(req, Buffer.from(body));
    } catch {
      send(res, 400, 'InvalidJson', 'the request body is not valid JSON');
      return;
    }
    req._body = true;
  }
  req.cronix = verified.context;
  next();
}

/**
 * The middleware: `app.post('/jobs/report', cronix({ secrets: [process.env.CRON_SECRET] }), handler)`
 * or `app.use('/jobs', cronix(…))`. Failures answer 401 `{"error":{"code","message"}}` (a body
 * over `maxBodyBytes` 413); a verified request goes on with `req.cronix` set.
 */
export function cronixExpress(
  opts: NodeAdapterOptions,
): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  return (req, res, next) => {
    handle(req as ExpressLikeRequest, res, next, opts).catch(next);
  };
}
