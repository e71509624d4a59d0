/**
 * `parseManifest` / `parseManifestText`: validate an untrusted value (structure, then semantic
 * rules), report every problem at once, and return the normalized manifest when there is none.
 */
import { locateJsonSyntaxError } from './json-location.js';
import { checkSemantics } from './semantic.js';
import { hasServices } from './service-rules.js';
import { checkStructure, MAX_ERRORS } from './structural.js';
import { normalizeManifest } from './normalize.js';
import type { ManifestInput } from './schema.js';
import type { ManifestError, ManifestParseResult } from './types.js';

function compareSegments(a: string, b: string): number {
  const numeric = /^(0|[1-9][0-9]{0,8})$/;
  if (numeric.test(a) && numeric.test(b)) return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders paths root first, then segment by segment (array indices numerically). */
function comparePaths(a: string, b: string): number {
  const left = a === '' ? [] : a.split('/');
  const right = b === '' ? [] : b.split('/');
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const order = compareSegments(left[i] ?? '', right[i] ?? '');
    if (order !== 0) return order;
  }
  return left.length - right.length;
}

/** Drops exact duplicates, sorts by path (stable), and caps the list at `MAX_ERRORS`. */
function finish(errors: readonly ManifestError[], truncated: boolean): ManifestError[] {
  const seen = new Set<string>();
  const unique = errors.filter((e) => {
    const key = `${e.path}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const sorted = unique.sort((x, y) => comparePaths(x.path, y.path));
  if (!truncated && sorted.length <= MAX_ERRORS) return sorted;
  return [
    ...sorted.slice(0, MAX_ERRORS),
    {
      path: '',
      message: `too many errors: showing the first ${MAX_ERRORS}; fix them and validate again`,
    },
  ];
}

/** The message of a caught value, without trusting it. */
function errorText(err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : 'unknown error';
  } catch {
    return 'unknown error';
  }
}

/**
 * `jobs` is 0..256 in the schema so that a services-only manifest passes (SPEC §17); without
 * services it is 1..256, and the structural messages about it say so.
 */
function jobsRange(errors: ManifestError[], raw: unknown): ManifestError[] {
  if (hasServices(raw)) return errors;
  return errors.map((e) =>
    e.path === 'jobs'
      ? { ...e, message: e.message.replace(/\barray of at most /, 'array of 1 to ') }
      : e,
  );
}

function validate(raw: unknown): ManifestParseResult {
  const checked = checkStructure(raw);
  const structure = { ...checked, errors: jobsRange(checked.errors, raw) };
  const semantic = checkSemantics(raw);
  if (structure.valid && semantic.length === 0) {
    return { ok: true, manifest: normalizeManifest(raw as ManifestInput) };
  }
  return { ok: false, errors: finish([...structure.errors, ...semantic], structure.truncated) };
}

/**
 * Validates and normalizes a manifest value (for example the result of `JSON.parse`).
 *
 * Every problem is reported at once as `{ path, message }`, with the path slash-joined from
 * the root (`jobs/0/policy/retries`; `""` for the root) and a message saying what was
 * expected and what was found. Never throws, whatever the input.
 */
export function parseManifest(raw: unknown): ManifestParseResult {
  try {
    return validate(raw);
  } catch (err) {
    const detail = errorText(err);
    return {
      ok: false,
      errors: [{ path: '', message: `could not validate the manifest: ${detail}` }],
    };
  }
}

/**
 * Parses manifest JSON text, then validates it like `parseManifest`. A JSON syntax error is
 * one error at path `""` naming the line and column (and `source`, e.g. a file name, when
 * given). A leading byte-order mark is ignored. Never throws.
 */
export function parseManifestText(text: string, source?: string): ManifestParseResult {
  const where = source === undefined || source === '' ? '' : ` in ${source}`;
  if (typeof text !== 'string') {
    return {
      ok: false,
      errors: [{ path: '', message: `expected manifest JSON text${where}, found ${typeof text}` }],
    };
  }
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (err) {
    const problem = locateJsonSyntaxError(body);
    const message =
      problem === null
        ? `invalid JSON${where}: ${errorText(err)}`
        : `invalid JSON${where} at line ${problem.line}, column ${problem.column}: ${problem.reason}`;
    return { ok: false, errors: [{ path: '', message }] };
  }
  return parseManifest(raw);
}
