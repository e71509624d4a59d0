/**
 * Adapters for Fetch-style frameworks, where a route handler receives a Web `Request`:
 * Hono middleware and a wrapper for Next.js route handlers (App Router) — or any runtime that
 * calls `(request) => Response` (Bun, Deno, Cloudflare Workers). The body is verified from a
 * clone, so the handler reads it as usual afterwards.
 */
import { triggerInfo } from './trigger.js';
import { unauthorizedResponse, verifyRequest, type VerifyRequestOptions } from './verify.js';
import type { CronixContext } from './node-request.js';

/** Verifies a Fetch `Request`; a failure comes back as the 401 `Response` to answer with. */
export async function verifyFetch(
  request: Request,
  opts: VerifyRequestOptions,
): Promise<{ ok: true; context: CronixContext } | { ok: false; response: Response }> {
  const result = await verifyRequest(request, opts);
  if (!result.ok) return { ok: false, response: unauthorizedResponse(result) };
  return {
    ok: true,
    context: {
      trigger: triggerInfo(request),
      secretIndex: result.secretIndex,
      timestamp: result.timestamp,
    },
  };
}

/** The part of Hono's `Context` the middleware uses. */
export interface HonoLikeContext {
  req: { raw: Request };
  set(key: 'cronix', value: CronixContext): void;
}

/**
 * Hono middleware: `app.post('/jobs/report', cronixHono({ secrets }), (c) => …)`; the handler
 * reads the trigger as `c.get('cronix')` (type the app with `Variables: { cronix: CronixContext }`).
 */
export function cronixHono(
  opts: VerifyRequestOptions,
): (c: HonoLikeContext, next: () => Promise<void>) => Promise<Response | undefined> {
  return async (c, next) => {
    const verified = await verifyFetch(c.req.raw, opts);
    if (!verified.ok) return verified.response;
    c.set('cronix', verified.context);
    await next();
    return undefined;
  };
}

/**
 * Wraps a Next.js route handler (`app/…/route.ts`), or any `(request, context) => Response`:
 * `export const POST = withCronix({ secrets }, async (request, ctx, cronix) => …)`. A request
 * that fails verification is answered 401 without calling the handler.
 */
export function withCronix<Ctx, R extends Response>(
  opts: VerifyRequestOptions,
  handler: (request: Request, ctx: Ctx, cronix: CronixContext) => R | Promise<R>,
): (request: Request, ctx: Ctx) => Promise<Response> {
  return async (request, ctx) => {
    const verified = await verifyFetch(request, opts);
    if (!verified.ok) return verified.response;
    return handler(request, ctx, verified.context);
  };
}
