/**
 * Small helpers shared by the structural and semantic checks: safe property access on
 * untrusted values, error paths, and plain-English descriptions of schemas and values.
 */
import { echo } from '../echo.js';
import {
  EMAIL_PATTERN,
  ENV_NAME_PATTERN,
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  HOST_PATTERN,
  NAME_PATTERN,
  NO_NUL_PATTERN,
  SECRET_REF_PATTERN,
} from './defaults.js';

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads an own property of an untrusted value; `undefined` when the value is not an object
 * or the key is inherited (so `__proto__` or `constructor` never leak from the prototype).
 */
export function own(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  if (!Object.prototype.hasOwnProperty.call(value, key)) return undefined;
  return (value as Record<string, unknown>)[key];
}

/** Escapes one path segment (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapeSegment(key: string): string {
  // most keys need no escaping: skip the two scans that would allocate (100k-job start-up)
  if (!key.includes('~') && !key.includes('/')) return key;
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Joins a parent path and one key into an error path. */
export function childPath(parent: string, key: string | number): string {
  const segment = typeof key === 'number' ? String(key) : escapeSegment(key);
  return parent === '' ? segment : `${parent}/${segment}`;
}

/** Quotes a string for a message, cut to a readable length (the shared {@link echo}). */
export function quote(text: string): string {
  return echo(text);
}

/** Describes any value for the "found ..." half of a message. Never throws. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'boolean':
      return String(value);
    case 'bigint':
      return `the bigint ${value.toString()}`;
    case 'object':
      if (Array.isArray(value)) {
        return value.length === 0 ? 'an empty array' : `an array of ${value.length} entries`;
      }
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

/** Readable names for patterns whose regular expression says little to a reader. */
const PATTERN_WORDS: Record<string, string> = {
  [NAME_PATTERN]:
    "a name of lowercase letters, digits and '-', starting with a letter, at most 63 characters",
  [SECRET_REF_PATTERN]:
    'a secret ref such as env:CRON_SECRET, file:/run/secrets/cron or raw:value (a letter first, then letters, digits and _:./-, at most 128 characters)',
  [EMAIL_PATTERN]: 'an e-mail address such as ops@example.com',
  [HOST_PATTERN]: "a host name or address without spaces or '/'",
  [HEADER_NAME_PATTERN]:
    "a header name that is an HTTP token (letters, digits and !#$%&'*+-.^_`|~)",
  [HEADER_VALUE_PATTERN]: 'a header value without CR, LF or NUL characters',
  [ENV_NAME_PATTERN]:
    'an environment variable name (letters, digits and _, not starting with a digit)',
  [NO_NUL_PATTERN]: 'a string without NUL characters',
};

/** The parts of a JSON-Schema node the descriptions look at. */
interface SchemaLike {
  type?: unknown;
  const?: unknown;
  anyOf?: unknown;
  pattern?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  minItems?: unknown;
  maxItems?: unknown;
  maxProperties?: unknown;
}

function range(min: unknown, max: unknown, noun: string): string {
  if (typeof min === 'number' && typeof max === 'number') return `${noun} from ${min} to ${max}`;
  if (typeof min === 'number') return `${noun} of at least ${min}`;
  if (typeof max === 'number') return `${noun} of at most ${max}`;
  return noun;
}

/** Describes what a schema node expects, e.g. `an integer from 1 to 600`. Never throws. */
export function describeSchema(node: unknown): string {
  if (!isRecord(node)) return 'a valid value';
  const schema = node as SchemaLike;
  if (schema.const !== undefined) {
    return typeof schema.const === 'number'
      ? `the number ${schema.const}`
      : JSON.stringify(schema.const);
  }
  if (Array.isArray(schema.anyOf)) {
    const options = schema.anyOf.map((variant: unknown) => describeSchema(variant));
    return `one of ${options.join(', ')}`;
  }
  switch (schema.type) {
    case 'string': {
      if (typeof schema.pattern !== 'string') return 'a string';
      return PATTERN_WORDS[schema.pattern] ?? `a string matching ${schema.pattern}`;
    }
    case 'integer':
      return range(schema.minimum, schema.maximum, 'an integer');
    case 'number':
      return range(schema.minimum, schema.maximum, 'a number');
    case 'boolean':
      return 'a boolean (true or false)';
    case 'array': {
      const { minItems: min, maxItems: max } = schema;
      if (min === 0 && typeof max === 'number') return `an array of at most ${max} entries`;
      if (typeof min === 'number' && typeof max === 'number')
        return `an array of ${min} to ${max} entries`;
      if (typeof min === 'number') return `an array of at least ${min} entries`;
      return 'an array';
    }
    case 'object':
      return typeof schema.maxProperties === 'number'
        ? `an object of at most ${schema.maxProperties} entries`
        : 'an object';
    default:
      return 'a valid value';
  }
}

/** Describes the value found at a header-value position without echoing it (it may be secret). */
export function describeHeaderValue(value: unknown): string {
  if (typeof value !== 'string') return describeValue(value);
  if (value.includes('\r')) return 'a value containing a CR character';
  if (value.includes('\n')) return 'a value containing an LF character';
  if (value.includes('\u0000')) return 'a value containing a NUL character';
  return 'a valid value';
}

/**
 * The closest valid app, job or notifier name to `text` (`settle_invoices` → `settle-invoices`,
 * `Billing` → `billing`), or null when nothing usable is left.
 */
export function suggestName(text: string): string | null {
  const name = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name === '' || name === text ? null : name;
}

/** `expected X, found Y` for a schema node and the value found (with a fix when there is one). */
export function mismatch(schema: unknown, value: unknown): string {
  const pattern = isRecord(schema) ? schema['pattern'] : undefined;
  const maxProperties = isRecord(schema) ? schema['maxProperties'] : undefined;
  const found =
    pattern === HEADER_VALUE_PATTERN
      ? describeHeaderValue(value)
      : typeof maxProperties === 'number' && isRecord(value)
        ? `an object of ${Object.keys(value).length} entries`
        : describeValue(value);
  const fixed = pattern === NAME_PATTERN && typeof value === 'string' ? suggestName(value) : null;
  return `expected ${describeSchema(schema)}, found ${found}${fixed === null ? '' : `; did you mean ${quote(fixed)}?`}`;
}

/** Edit distance, bounded work for short keys only (used for "did you mean"). */
function distance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Number.POSITIVE_INFINITY;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? Number.POSITIVE_INFINITY;
}

/** Message for an unknown key, suggesting the closest known key or listing them all. */
export function unknownField(key: string, known: readonly string[]): string {
  const lower = key.toLowerCase();
  const close = known.find(
    (k) =>
      k.toLowerCase() === lower ||
      distance(lower, k) <= (lower.length <= 4 ? 1 : 2) ||
      (lower.length >= 4 && k.startsWith(lower)),
  );
  if (close !== undefined) return `unknown field ${quote(key)}; did you mean ${quote(close)}?`;
  return `unknown field ${quote(key)} (allowed: ${known.join(', ')})`;
}
