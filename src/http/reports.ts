/**
 * Host-mode routes (SPEC §15): `POST /api/v1/reports` and the pings. They carry no API token:
 * a report is authenticated by its signature (the report secret), a ping by its signature or its
 * job's ping token (`ping.ts`). They have a body limit of their own (1 MiB), read the body as
 * bytes (the signature covers them verbatim), and answer every refusal with the §7 error shape.
 * The decisions are the watch room's (`src/daemon/watch/`).
 */
import type { IncomingMessage } from 'node:http';
import type { Context, Hono } from 'hono';
import { MAX_REPORT_BYTES, REPORT_PATH } from '../contract/report.js';
import { SIGNATURE_HEADER } from '../contract/signature.js';
import { PING_PATH, PING_TOKEN_HEADER } from '../contract/ping.js';
import { pingKind } from '../daemon/watch/ping.js';
import type { Refusal } from '../daemon/watch/receive.js';
import type { Watch } from '../daemon/watch/watch.js';
import { errorJson, runJson } from './serialize.js';

/** Paths that authenticate themselves (no API token, their own body limit). */
export function isHostRoute(path: string): boolean {
  return path === REPORT_PATH || path.startsWith('/api/v1/ping/');
}

/** The path and query of a request exactly as sent (what the signature covers). */
export function pathAndQuery(c: Context): string {
  const url = c.req.url;
  const at = url.indexOf('/', url.indexOf('//') + 2);
  return at < 0 ? '/' : url.slice(at);
}

/** A refusal as the §7 error body. */
export function refused(c: Context, r: Refusal): Response {
  return c.json(errorJson(r.code, r.message, r.path), r.status);
}

/** The body was larger than the report limit. */
class TooLarge extends Error {}

/**
 * The request body as bytes, at most {@link MAX_REPORT_BYTES}. Read from the Node request
 * itself when there is one: a report is small and comes in bursts, and the web-stream body of
 * a Fetch `Request` cost more than the rest of its handling (measured in the report bench).
 */
async function readBody(c: Context): Promise<Uint8Array> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > MAX_REPORT_BYTES) throw new TooLarge();
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming || incoming.readableEnded || incoming.destroyed)
    return new Uint8Array(await c.req.arrayBuffer());
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REPORT_BYTES) throw new TooLarge();
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

const tooLarge = (c: Context): Response =>
  c.json(
    errorJson(
      'payload_too_large',
      `a report body may have at most ${MAX_REPORT_BYTES} bytes (1 MiB)`,
    ),
    413,
  );

/** The body, or the 413 answer. */
async function bodyOr413(c: Context): Promise<Uint8Array | Response> {
  try {
    return await readBody(c);
  } catch (err) {
    if (err instanceof TooLarge) return tooLarge(c);
    throw err;
  }
}

/** Mounts `POST /api/v1/reports`; without `--watch` it answers 404 `not_watching`. */
export function registerReports(app: Hono, watch: Watch | null): void {
  app.post(REPORT_PATH, async (c) => {
    if (!watch)
      return c.json(
        errorJson('not_watching', 'this server watches no jobs (start it with serve --watch)'),
        404,
      );
    const body = await bodyOr413(c);
    if (body instanceof Response) return body;
    const answer = await watch.report(
      c.req.header(SIGNATURE_HEADER),
      c.req.method,
      pathAndQuery(c),
      body,
    );
    if (!answer.ok) return refused(c, answer.refusal);
    return c.json({ result: answer.result.kind, run: runJson(answer.result.run) }, 200);
  });

  const ping = async (c: Context): Promise<Response> => {
    if (!watch)
      return c.json(
        errorJson('not_watching', 'this server watches no jobs (start it with serve --watch)'),
        404,
      );
    const suffix = c.req.param('suffix');
    const kind = pingKind(suffix);
    if (kind === null)
      return c.json(
        errorJson(
          'not_found',
          `a ping ends in /start, /fail or /<exit code 0..255>, not /${suffix?.slice(0, 60) ?? ''}`,
        ),
        404,
      );
    const body = await bodyOr413(c);
    if (body instanceof Response) return body;
    const answer = await watch.ping({
      app: c.req.param('app') ?? '',
      job: c.req.param('job') ?? '',
      kind,
      host: c.req.query('host') ?? 'ping',
      rid: c.req.query('rid') ?? null,
      token: c.req.query('token') ?? c.req.header(PING_TOKEN_HEADER) ?? null,
      signature: c.req.header(SIGNATURE_HEADER),
      method: c.req.method,
      pathAndQuery: pathAndQuery(c),
      body,
    });
    if (!answer.ok) return refused(c, answer.refusal);
    return c.json({ result: answer.result.kind, run: runJson(answer.result.run) }, 200);
  };
  app.post(`${PING_PATH}/:app/:job`, ping);
  app.post(`${PING_PATH}/:app/:job/:suffix`, ping);
}
