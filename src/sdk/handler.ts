/**
 * Serving an app's manifest at `GET /.well-known/cron-manifest`, the URL the
 * reconciler fetches (with a signed GET) to learn an app's jobs.
 */
import { canonicalize } from '../contract/manifest/index.js';
import { SIGNATURE_HEADER, verify } from '../contract/signature.js';
import type { AppBuilder } from './app.js';
import { pathAndQuery, systemNowSeconds, unauthorizedResponse } from './verify.js';

/** Where apps serve their manifest. */
export const MANIFEST_PATH = '/.well-known/cron-manifest';

/** Options of {@link manifestHandler}. */
export interface ManifestHandlerOptions {
  /**
   * When given, every request must carry a valid `X-Cron-Signature` made with
   * one of these secret values (an empty list rejects everything). When
   * absent, the manifest is served without authentication.
   */
  secrets?: readonly string[];
  /** Accepted clock distance in seconds; default 300, never below 30. */
  maxSkewSeconds?: number;
  /** Current Unix time in seconds; defaults to the system clock. */
  now?: () => number;
}

function jsonError(status: number, code: string, message: string, extra?: HeadersInit): Response {
  const headers = new Headers(extra);
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify({ error: { code, message } }), { status, headers });
}

/**
 * Returns a fetch-style handler serving the app's canonical manifest JSON at
 * `GET /.well-known/cron-manifest` (`HEAD` too); other paths get 404, other
 * methods 405, and a failed signature check 401.
 *
 * The manifest is built and validated once, when the handler is created, so
 * an invalid declaration fails at start-up (throws `InvalidManifestError`):
 * declare every job before calling this.
 */
export function manifestHandler(
  app: AppBuilder,
  opts: ManifestHandlerOptions = {},
): (request: Request) => Response {
  const canonical = canonicalize(app.toManifest());
  return (request) => {
    const url = new URL(request.url);
    if (url.pathname !== MANIFEST_PATH) {
      return jsonError(
        404,
        'NotFound',
        `no route for ${url.pathname}; the manifest is served at ${MANIFEST_PATH}`,
      );
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return jsonError(
        405,
        'MethodNotAllowed',
        `use GET for ${MANIFEST_PATH}, not ${request.method}`,
        {
          allow: 'GET, HEAD',
        },
      );
    }
    if (opts.secrets !== undefined) {
      // GET and HEAD requests carry no body, so the signed body is zero bytes.
      const result = verify({
        header: request.headers.get(SIGNATURE_HEADER),
        secrets: opts.secrets,
        method: request.method,
        path: pathAndQuery(request),
        now: (opts.now ?? systemNowSeconds)(),
        ...(opts.maxSkewSeconds === undefined ? {} : { maxSkewSeconds: opts.maxSkewSeconds }),
      });
      if (!result.ok) return unauthorizedResponse(result);
    }
    return new Response(request.method === 'HEAD' ? null : canonical, {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    });
  };
}
