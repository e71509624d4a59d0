/**
 * Request signing contract (SPEC §4): HMAC-SHA256 over
 * `<unix_seconds>.<METHOD>.<path-and-query>.<body>`, carried as
 * `X-Cron-Signature: t=<unix_seconds>,v1=<64 lowercase hex>`.
 *
 * Pure: no clock, no I/O. Callers pass the current time in. Verification
 * failures are result values, never exceptions, and no message ever carries a
 * secret value.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Name of the HTTP header that carries the signature. */
export const SIGNATURE_HEADER = 'X-Cron-Signature';

/** Default accepted distance between the signed timestamp and now, in seconds. */
export const DEFAULT_MAX_SKEW_SECONDS = 300;

/** Smallest skew window a verifier will use; smaller configured values are raised to it. */
export const MIN_MAX_SKEW_SECONDS = 30;

/** The signature scheme tag this implementation emits and verifies. */
export const SIGNATURE_VERSION = 'v1';

/** Why a verification failed. Every code maps to HTTP 401. */
export type VerifyErrorCode =
  'MissingSignature' | 'MalformedHeader' | 'StaleTimestamp' | 'SignatureMismatch';

/** All verification failure codes, in the order they are checked. */
export const VERIFY_ERROR_CODES: readonly VerifyErrorCode[] = [
  'MissingSignature',
  'MalformedHeader',
  'StaleTimestamp',
  'SignatureMismatch',
];

/** A body as signed: raw bytes, a string (encoded as UTF-8), or nothing (zero bytes). */
export type SignableBody = Uint8Array | string | null | undefined;

/** Inputs for {@link sign}. */
export interface SignOptions {
  /** The secret value (never a ref). Must be non-empty. */
  secret: string;
  /** HTTP method; upper-cased before signing. */
  method: string;
  /** Path and query exactly as sent, e.g. `/jobs/run?x=1`. */
  path: string;
  /** Body bytes sent verbatim; omitted means zero bytes. */
  body?: SignableBody;
  /** Unix seconds (integer) at send time. */
  timestamp: number;
}

/** Inputs for {@link verify}. */
export interface VerifyOptions {
  /** The received `X-Cron-Signature` value; null/undefined when absent. */
  header: string | null | undefined;
  /** Accepted secret values, in rotation order; the matching index is reported. */
  secrets: readonly string[];
  /** HTTP method of the received request. */
  method: string;
  /** Path and query exactly as received. */
  path: string;
  /** Received body bytes; omitted means zero bytes. */
  body?: SignableBody;
  /** Current time in Unix seconds (fractions are floored). */
  now: number;
  /** Accepted clock distance in seconds; default 300, values below 30 are raised to 30. */
  maxSkewSeconds?: number;
}

/** A successful verification: which secret matched and the signed timestamp. */
export interface VerifyOk {
  ok: true;
  secretIndex: number;
  timestamp: number;
}

/** A failed verification. `message` is safe to log and to return to a client. */
export interface VerifyFailure {
  ok: false;
  code: VerifyErrorCode;
  message: string;
}

/** Outcome of {@link verify}. */
export type VerifyResult = VerifyOk | VerifyFailure;

/** Outcome of {@link parseSignatureHeader}. */
export type ParsedSignatureHeader =
  | { ok: true; timestamp: number; v1: string }
  | { ok: false; code: 'MalformedHeader'; message: string };

const encoder = new TextEncoder();
const HEX_64 = /^[0-9a-fA-F]{64}$/;
const DECIMAL = /^[0-9]{1,16}$/;
const OWS = /^[ \t]+|[ \t]+$/g;

const NO_BYTES = new Uint8Array(0);

function bodyBytes(body: SignableBody): Uint8Array {
  if (body === undefined || body === null || body === '') return NO_BYTES;
  return typeof body === 'string' ? encoder.encode(body) : body;
}

/**
 * Builds the exact bytes that are MAC'd: `<t>.<METHOD>.<path>.<body>`.
 * Exposed for diagnostics and for other-language parity tests.
 */
export function signingBytes(
  timestamp: number,
  method: string,
  path: string,
  body?: SignableBody,
): Uint8Array {
  const prefix = encoder.encode(`${timestamp}.${method.toUpperCase()}.${path}.`);
  const payload = bodyBytes(body);
  const out = new Uint8Array(prefix.length + payload.length);
  out.set(prefix, 0);
  out.set(payload, prefix.length);
  return out;
}

function hmac(secret: string, bytes: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(bytes).digest();
}

/**
 * Signs one request and returns the `X-Cron-Signature` header value
 * `t=<unix_seconds>,v1=<64 lowercase hex>`.
 *
 * Throws `RangeError` on programmer errors only (empty secret, timestamp that
 * is not a non-negative safe integer); the message never includes the secret.
 */
export function sign(opts: SignOptions): string {
  if (opts.secret.length === 0) {
    throw new RangeError('sign: secret must be a non-empty string');
  }
  const t = opts.timestamp;
  if (!Number.isSafeInteger(t) || t < 0) {
    throw new RangeError(
      `sign: timestamp must be a non-negative integer of Unix seconds, got ${t}`,
    );
  }
  // the bytes of signingBytes(), fed to the MAC in two parts instead of copied into one array
  const mac = createHmac('sha256', opts.secret).update(
    `${t}.${opts.method.toUpperCase()}.${opts.path}.`,
  );
  const payload = bodyBytes(opts.body);
  if (payload.length > 0) mac.update(payload);
  return `t=${t},${SIGNATURE_VERSION}=${mac.digest('hex')}`;
}

/** Alias of {@link sign}, for call sites where `sign` is ambiguous. */
export const signPayload = sign;

function malformed(message: string): { ok: false; code: 'MalformedHeader'; message: string } {
  return { ok: false, code: 'MalformedHeader', message };
}

/**
 * Parses an `X-Cron-Signature` value. Segments are comma separated, order
 * free, each `key=value` with optional surrounding spaces/tabs; unknown keys
 * are ignored; `t` (decimal integer) and `v1` (64 hex chars, either case,
 * returned lower-cased) are required and may each appear only once.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader {
  if (header.replace(OWS, '') === '') return malformed('signature header is empty');
  let timestamp: number | undefined;
  let v1: string | undefined;
  const segments = header.split(',');
  for (const [i, raw] of segments.entries()) {
    const segment = raw.replace(OWS, '');
    const eq = segment.indexOf('=');
    if (eq < 0) {
      return malformed(`segment ${i + 1} has no "=" (expected key=value, e.g. "t=1730000000")`);
    }
    const key = segment.slice(0, eq).replace(OWS, '');
    const value = segment.slice(eq + 1).replace(OWS, '');
    if (key === 't') {
      if (timestamp !== undefined) return malformed('segment "t" appears more than once');
      if (!DECIMAL.test(value) || !Number.isSafeInteger(Number(value))) {
        return malformed(
          `"t" must be a decimal integer of Unix seconds, got "${value.slice(0, 32)}"`,
        );
      }
      timestamp = Number(value);
    } else if (key === SIGNATURE_VERSION) {
      if (v1 !== undefined) return malformed('segment "v1" appears more than once');
      if (!HEX_64.test(value)) {
        return malformed(`"v1" must be 64 hex characters, got ${value.length} characters`);
      }
      v1 = value.toLowerCase();
    }
    // Unknown segments are ignored (forward compatibility, e.g. a future v2).
  }
  if (timestamp === undefined) return malformed('missing required segment "t"');
  if (v1 === undefined) return malformed('missing required segment "v1"');
  return { ok: true, timestamp, v1 };
}

/** Effective skew window: default 300 s, never below 30 s. */
export function effectiveMaxSkew(maxSkewSeconds: number | undefined): number {
  if (maxSkewSeconds === undefined || Number.isNaN(maxSkewSeconds)) return DEFAULT_MAX_SKEW_SECONDS;
  return Math.max(MIN_MAX_SKEW_SECONDS, maxSkewSeconds);
}

/**
 * Verifies a received request against every accepted secret.
 *
 * Checks, in order: header present (`MissingSignature`), well-formed
 * (`MalformedHeader`), timestamp within the skew window in either direction
 * (`StaleTimestamp`), and a constant-time MAC match against some secret
 * (`SignatureMismatch`). Every secret is tried, with no early exit, so timing
 * does not reveal which one matched; empty secrets never match.
 */
export function verify(opts: VerifyOptions): VerifyResult {
  if (opts.header === null || opts.header === undefined) {
    return {
      ok: false,
      code: 'MissingSignature',
      message: `request has no ${SIGNATURE_HEADER} header`,
    };
  }
  const parsed = parseSignatureHeader(opts.header);
  if (!parsed.ok) return parsed;

  const now = Math.floor(opts.now);
  const maxSkew = effectiveMaxSkew(opts.maxSkewSeconds);
  const skew = now - parsed.timestamp;
  if (!(Math.abs(skew) <= maxSkew)) {
    const direction = skew > 0 ? 'old' : 'in the future';
    return {
      ok: false,
      code: 'StaleTimestamp',
      message: `signature timestamp ${parsed.timestamp} is ${Math.abs(skew)}s ${direction}; the accepted window is ${maxSkew}s`,
    };
  }

  const expected = Buffer.from(parsed.v1, 'hex');
  const bytes = signingBytes(parsed.timestamp, opts.method, opts.path, opts.body);
  let matched = -1;
  for (let i = 0; i < opts.secrets.length; i++) {
    const secret = opts.secrets[i] ?? '';
    // An empty key is public knowledge: compute anyway (uniform timing) but never accept it.
    const mac = hmac(secret, bytes);
    const equal = timingSafeEqual(mac, expected);
    if (equal && secret.length > 0 && matched < 0) matched = i;
  }
  if (matched < 0) {
    return {
      ok: false,
      code: 'SignatureMismatch',
      message:
        opts.secrets.length === 0
          ? 'no verification secrets are configured'
          : `signature does not match any of the ${opts.secrets.length} configured secret(s)`,
    };
  }
  return { ok: true, secretIndex: matched, timestamp: parsed.timestamp };
}
