/**
 * Failures of EventBridge Scheduler calls, mapped onto the backend seam's errors: an endpoint
 * that cannot be reached (or is overloaded) is {@link BackendUnreachableError} (exit 3);
 * everything the operator must fix — credentials, permissions, region, a missing group, a
 * rejected request — is {@link BackendWriteError} (exit 1) with a message that names the
 * operation, AWS's error and the fix.
 */
import { BackendUnreachableError, BackendWriteError } from '../backend.js';
import { NETWORK_ERROR_CODES } from './network-errors.js';

const NETWORK_CODES = NETWORK_ERROR_CODES;

const AUTH_ERRORS = new Set([
  'AccessDeniedException',
  'AccessDenied',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'ExpiredTokenException',
  'ExpiredToken',
  'InvalidClientTokenId',
  'IncompleteSignature',
  'MissingAuthenticationTokenException',
]);

interface SdkErrorShape {
  name?: string;
  message?: string;
  code?: string;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
  cause?: { code?: string };
}

/** Whether `err` is AWS's "no such schedule (or group)". */
export function isNotFound(err: unknown): boolean {
  return err instanceof Error && err.name === 'ResourceNotFoundException';
}

/** Whether `err` is AWS's "a schedule of that name exists". */
export function isConflict(err: unknown): boolean {
  return err instanceof Error && err.name === 'ConflictException';
}

function isUnreachable(e: SdkErrorShape): boolean {
  if (e.code && NETWORK_CODES.has(e.code)) return true;
  if (e.cause?.code && NETWORK_CODES.has(e.cause.code)) return true;
  if (e.name === 'TimeoutError' || e.name === 'RequestTimeout') return true;
  if (e.name === 'ThrottlingException' || e.name === 'InternalServerException') return true;
  const status = e.$metadata?.httpStatusCode;
  return status !== undefined && status >= 500;
}

/** One line describing a failed call: operation, AWS error name and message, and the fix. */
export function describeAwsError(op: string, err: unknown, where: string): string {
  const e = (err ?? {}) as SdkErrorShape;
  const name = e.name ?? 'Error';
  const message = e.message ?? String(err);
  const base = `EventBridge Scheduler ${op} failed (${where}): ${name}: ${message}`;
  if (AUTH_ERRORS.has(name)) {
    return `${base}. Check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE…) and that they allow scheduler:ListSchedules, GetSchedule, CreateSchedule, UpdateSchedule, DeleteSchedule and iam:PassRole on --aws-role-arn`;
  }
  if (name === 'CredentialsProviderError') {
    return `${base}. No AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run where an instance/task role is available`;
  }
  if (/region is missing/i.test(message)) {
    return `EventBridge Scheduler ${op} failed: no AWS region; pass --aws-region or set AWS_REGION`;
  }
  if (name === 'ResourceNotFoundException') {
    return `${base}. Does the schedule group exist? Create it with: aws scheduler create-schedule-group --name <group>`;
  }
  if (isUnreachable(e))
    return `${base}. Is the endpoint reachable (AWS_ENDPOINT_URL, network, region)?`;
  return base;
}

/** The seam error for a failed call (see the module comment). */
export function toBackendError(op: string, err: unknown, where: string): Error {
  const message = describeAwsError(op, err, where);
  const e = (err ?? {}) as SdkErrorShape;
  const wrapped =
    isUnreachable(e) && !AUTH_ERRORS.has(e.name ?? '')
      ? new BackendUnreachableError(message)
      : new BackendWriteError(message);
  (wrapped as Error & { cause?: unknown }).cause = err;
  return wrapped;
}
