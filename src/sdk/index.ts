/**
 * cronix app-side SDK (`cronix/sdk`): verify signed trigger requests, read
 * trigger identifiers, declare jobs in code and serve the manifest.
 * Depends on the pure contract only, so it runs wherever Web `Request` and
 * `node:crypto` exist.
 */
export {
  verifyRequest,
  unauthorizedResponse,
  pathAndQuery,
  systemNowSeconds,
  type VerifyRequestOptions,
  type UnauthorizedBody,
} from './verify.js';
export { triggerInfo, TRIGGER_HEADERS, type TriggerInfo } from './trigger.js';
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
