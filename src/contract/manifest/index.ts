/**
 * The manifest contract (SPEC §2, §8): schema, parsing with complete error reports,
 * normalization, canonical form and change hashes. Pure: no I/O.
 */
export {
  CATCHUP_MODES,
  COMMAND_DEFAULTS,
  CONCURRENCY_POLICIES,
  CONCURRENCY_SCOPES,
  ENV_NAME_PATTERN,
  EXTENSION_DEFAULTS,
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  HTTP_METHODS,
  LIMITS,
  NAME_PATTERN,
  NOTIFIER_TYPES,
  NOTIFY_DEFAULTS,
  NOTIFY_EVENTS,
  RESERVED_ENV_PREFIX,
  SECRET_REF_PATTERN,
  SERVICE_DEFAULTS,
  V1_DEFAULTS,
} from './defaults.js';
export {
  AuthSchema,
  CatchupSchema,
  CommandSchema,
  JitterSchema,
  JobSchema,
  ManifestSchema,
  NotifierSchema,
  NotifySchema,
  PolicySchema,
  RequestSchema,
  RetriesSchema,
  ServiceSchema,
  type ServiceInput,
  type CommandInput,
  type JobInput,
  type ManifestInput,
  type NotifierInput,
  type NotifyInput,
  type PolicyInput,
  type RequestInput,
} from './schema.js';
export type {
  CatchupMode,
  CatchupPolicy,
  Concurrency,
  ConcurrencyScope,
  HttpMethod,
  JitterPolicy,
  Job,
  JobAuth,
  JobCommand,
  JobPolicy,
  JobRequest,
  Manifest,
  ManifestError,
  ManifestParseResult,
  Notifier,
  NotifierType,
  NotifyEntry,
  NotifyEvent,
  RetryPolicy,
  Service,
  ServiceReady,
  ServiceRestart,
  SmtpNotifier,
  WebhookNotifier,
} from './types.js';
export { parseManifest, parseManifestText } from './parse.js';
export { MAX_ERRORS } from './structural.js';
export {
  canonicalize,
  canonicalJob,
  canonicalNotifier,
  canonicalService,
  writeNotifiers as canonicalNotifiers,
} from './canonical.js';
export {
  CHANGE_HASH_LENGTH,
  changeHash,
  jobChangeHash,
  singleScheduleManifest,
} from './change-hash.js';
export {
  attemptStopSeconds,
  effectiveCommand,
  effectiveNotify,
  effectivePolicy,
  effectiveService,
  isJobEnabled,
  type EffectiveService,
  type EffectiveCommand,
  type EffectiveCatchup,
  type EffectiveJitter,
  type EffectiveNotify,
  type EffectivePolicy,
} from './effective.js';
export {
  JSON_SCHEMA_DIALECT,
  MANIFEST_SCHEMA_ID,
  buildManifestJsonSchema,
  renderManifestJsonSchema,
} from './json-schema.js';
export { parseHostPort, readyAddress } from './service-rules.js';
export { manifestWarnings, type ManifestWarning } from './warnings.js';
