/**
 * Fastify (4 and 5) plugin: verifies the `X-Cron-Signature` of every request of the context it
 * is registered in, over the raw body bytes, before any content-type parser sees them.
 *
 * It works in Fastify's `preParsing` hook: the payload stream is read whole (up to
 * `maxBodyBytes`), kept as `request.rawBody`, verified, and handed on as a fresh stream to
 * whichever parser the route has — Fastify's own JSON parser or one the app registered — so the
 * parsed `request.body` is unchanged. A request that fails is answered 401
 * `{"error":{"code","message"}}` before parsing; a verified one carries `request.cronix`.
 *
 * Register it where the job routes are: `app.register(cronixFastify, { secrets })` applies it to
 * the routes of that context (the plugin skips Fastify's encapsulation, as `fastify-plugin`
 * does), so put it in a child context (`app.register(async (jobs) => { … })`) when the same app
 * has routes that are not cronix's.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import {
  BodyTooLargeError,
  DEFAULT_MAX_BODY_BYTES,
  errorBody,
  readBody,
  verifyReceived,
  type CronixContext,
  type NodeAdapterOptions,
} from './node-request.js';

/** Options of {@link cronixFastify}. */
export type FastifyCronixOptions = NodeAdapterOptions;

/** The request fields the plugin reads and sets. */
interface FastifyLikeRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  raw: { url?: string };
  rawBody?: Buffer;
  cronix?: CronixContext;
}

/** The reply methods the plugin uses. */
interface FastifyLikeReply {
  code(status: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(payload: string): FastifyLikeReply;
}

/** The instance methods the plugin uses. */
interface FastifyLikeInstance {
  addHook(
    name: 'preParsing',
    hook: (
      request: FastifyLikeRequest,
      reply: FastifyLikeReply,
      payload: AsyncIterable<unknown>,
    ) => Promise<unknown>,
  ): unknown;
  hasRequestDecorator(name: string): boolean;
  decorateRequest(name: string, value: unknown): unknown;
}

function reject(reply: FastifyLikeReply, status: number, code: string, message: string): void {
  reply.code(status).header('content-type', 'application/json').send(errorBody(code, message));
}

/**
 * The plugin. Typed loosely (`any` instance) so that it registers on any Fastify version without
 * the SDK depending on Fastify's types.
 */
export const cronixFastify = Object.assign(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  async function cronixFastify(instance: any, opts: FastifyCronixOptions): Promise<void> {
    const app = instance as FastifyLikeInstance;
    if (!Array.isArray(opts?.secrets)) {
      throw new TypeError('cronixFastify: option secrets must be an array of secret values');
    }
    if (!app.hasRequestDecorator('cronix')) app.decorateRequest('cronix', null);
    if (!app.hasRequestDecorator('rawBody')) app.decorateRequest('rawBody', null);
    app.addHook('preParsing', async (request, reply, payload) => {
      let body: Buffer;
      try {
        body = await readBody(payload, opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
      } catch (err) {
        if (err instanceof BodyTooLargeError) {
          reject(reply, 413, 'PayloadTooLarge', err.message);
          return undefined;
        }
        throw err;
      }
      const verified = verifyReceived(
        {
          method: request.method,
          target: request.raw.url ?? request.url,
          headers: request.headers,
          body,
        },
        opts,
      );
      if (!verified.ok) {
        reject(reply, 401, verified.code, verified.message);
        return undefined;
      }
      request.rawBody = body;
      request.cronix = verified.context;
      // the parser reads these bytes; Fastify compares their count with content-length
      return Object.assign(Readable.from([body]), { receivedEncodedLength: body.length });
    });
  },
  {
    /** `fastify-plugin`'s marker: the hooks apply to the context the plugin is registered in. */
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'cronix',
  },
);
