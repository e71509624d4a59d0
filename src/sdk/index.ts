/**
 * cronix app-side SDK (`@cronix/sdk`, also `cronix/sdk`): verify signed trigger requests (Fetch
 * `Request`, Express, Fastify, Hono, Next.js), read trigger identifiers, run a job's side effect
 * exactly once (`runOnce` on PostgreSQL or SQLite), declare jobs in code and serve the manifest.
 * Depends on the pure contract only, so it runs wherever Web `Request` and `node:crypto` exist;
 * the database drivers are the app's own (optional peers, never imported).
 */
export {
  verifyRequest,
  unauthorizedResponse,
  pathAndQuery,
  systemNowSeconds,
  type VerifyRequestOptions,
  type UnauthorizedBody,
} from './verify.js';
export {
  triggerInfo,
  headerValue,
  TRIGGER_HEADERS,
  type TriggerInfo,
  type HeaderSource,
} from './trigger.js';
export {
  verifyReceived,
  DEFAULT_MAX_BODY_BYTES,
  type CronixContext,
  type NodeAdapterOptions,
  type ReceivedRequest,
} from './node-request.js';
export { cronixExpress, keepRawBody, type ExpressLikeRequest } from './express.js';
export { cronixFastify, type FastifyCronixOptions } from './fastify.js';
export { cronixHono, withCronix, verifyFetch, type HonoLikeContext } from './fetch-adapters.js';
export * from './run-once/index.js';
export {
  defineApp,
  AppBuilder,
  InvalidManifestError,
  type AppOptions,
  type JobDeclaration,
  type JobMethod,
  type PolicyInput,
  type BuildError,
} from './app.js';
export { manifestHandler, MANIFEST_PATH, type ManifestHandlerOptions } from './handler.js';
export {
  sign,
  verify,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  DEFAULT_MAX_SKEW_SECONDS,
  MIN_MAX_SKEW_SECONDS,
  type VerifyErrorCode,
  type VerifyResult,
  type VerifyOk,
  type VerifyFailure,
} from '../contract/signature.js';
