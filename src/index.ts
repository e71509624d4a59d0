/**
 * cronix — public API of the package's main entry.
 *
 * The contract: manifests ({@link parseManifest}, {@link canonicalize},
 * {@link changeHash}), schedules ({@link nextFires}) and request signing
 * ({@link sign}, {@link verify}). App-side helpers live in `cronix/sdk`.
 *
 * @packageDocumentation
 */
export {
  parseManifest,
  parseManifestText,
  canonicalize,
  canonicalJob,
  changeHash,
  jobChangeHash,
  effectivePolicy,
  isJobEnabled,
  buildManifestJsonSchema,
  MANIFEST_SCHEMA_ID,
  type Manifest,
  type ManifestError,
  type ManifestParseResult,
  type Job,
  type JobRequest,
  type JobPolicy,
  type JobAuth,
  type RetryPolicy,
  type EffectivePolicy,
  type Concurrency,
  type ConcurrencyScope,
  type HttpMethod,
} from './contract/manifest/index.js';
export {
  parseSchedule,
  nextFire,
  nextFires,
  previousFire,
  checkTimeZone,
  toLocalRfc3339,
  ScheduleError,
  type Schedule,
  type NextFiresOptions,
  type ScheduleParseResult,
} from './contract/schedule/index.js';
export {
  sign,
  verify,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  DEFAULT_MAX_SKEW_SECONDS,
  MIN_MAX_SKEW_SECONDS,
  type SignOptions,
  type VerifyOptions,
  type VerifyResult,
  type VerifyErrorCode,
} from './contract/signature.js';
export {
  MIN_SECRET_BYTES,
  parseSecretRef,
  resolveSecretRefs,
  redact,
  shortSecretsError,
} from './secrets/resolve.js';
