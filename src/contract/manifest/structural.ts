/**
 * Structural validation: the compiled TypeBox checker, with its error iterator turned into
 * one clear `ManifestError` per problem (what was expected, what was found, at which path).
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { ManifestSchema } from './schema.js';
import { childPath, describeSchema, isRecord, mismatch, own, unknownField } from './describe.js';
import type { ManifestError } from './types.js';

/** Compiled once at module load. */
const checker = TypeCompiler.Compile(ManifestSchema);

/** Most distinct error paths collected from one input; the rest are summarized. */
export const MAX_ERRORS = 100;

/** Result of the structural pass. */
export interface StructureResult {
  /** True when the input matches the schema. */
  valid: boolean;
  /** One entry per problem, in the checker's order. */
  errors: ManifestError[];
  /** True when more problems exist than were collected. */
  truncated: boolean;
}

/** Splits a TypeBox path (`/jobs/0/name`) into unescaped segments. */
function segments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value at a path of segments inside an untrusted value (own properties only). */
function valueAt(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const segment of path) current = own(current, segment);
  return current;
}

function toPath(pointer: string): string {
  return segments(pointer).reduce<string>((path, segment) => childPath(path, segment), '');
}

/**
 * A record with restricted keys (the headers map) stops at its first bad key in TypeBox;
 * report every bad key, and the value under it when that is invalid too.
 */
function recordKeyErrors(root: unknown, error: ValueError): ManifestError[] {
  const parentSegments = segments(error.path).slice(0, -1);
  const record = valueAt(root, parentSegments);
  const patterns = isRecord(error.schema) ? own(error.schema, 'patternProperties') : undefined;
  if (!isRecord(record) || !isRecord(patterns)) return [];
  const [entry] = Object.entries(patterns);
  if (entry === undefined) return [];
  const [pattern, valueSchema] = entry;
  const keySchema = { type: 'string', pattern };
  const regex = new RegExp(pattern);
  const parent = parentSegments.reduce<string>((path, segment) => childPath(path, segment), '');
  const errors: ManifestError[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (regex.test(key)) continue;
    const path = childPath(parent, key);
    errors.push({ path, message: mismatch(keySchema, key) });
    if (isRecord(valueSchema) && !Value.Check(valueSchema as never, value)) {
      errors.push({ path, message: mismatch(valueSchema, value) });
    }
  }
  return errors;
}

/** Messages for the errors TypeBox reported at one path. */
function groupErrors(root: unknown, path: string, group: readonly ValueError[]): ManifestError[] {
  const required = group.find((e) => e.type === ValueErrorType.ObjectRequiredProperty);
  if (required !== undefined) {
    return [
      { path, message: `required field is missing (expected ${describeSchema(required.schema)})` },
    ];
  }
  const out: ManifestError[] = [];
  const additional = group.find((e) => e.type === ValueErrorType.ObjectAdditionalProperties);
  if (additional !== undefined) {
    if (isRecord(own(additional.schema, 'patternProperties'))) {
      out.push(...recordKeyErrors(root, additional));
    } else {
      const properties = own(additional.schema, 'properties');
      const known = isRecord(properties) ? Object.keys(properties) : [];
      const key = segments(additional.path).at(-1) ?? '';
      out.push({ path, message: unknownField(key, known) });
    }
  }
  const other = group.find((e) => e.type !== ValueErrorType.ObjectAdditionalProperties);
  if (other !== undefined) out.push({ path, message: mismatch(other.schema, other.value) });
  return out;
}

/** Checks `raw` against the manifest schema and explains every mismatch. Never throws. */
export function checkStructure(raw: unknown): StructureResult {
  if (checker.Check(raw)) return { valid: true, errors: [], truncated: false };
  const groups = new Map<string, ValueError[]>();
  let truncated = false;
  for (const error of checker.Errors(raw)) {
    const path = toPath(error.path);
    let group = groups.get(path);
    if (group === undefined) {
      if (groups.size >= MAX_ERRORS) {
        truncated = true;
        break;
      }
      group = [];
      groups.set(path, group);
    }
    group.push(error);
  }
  const errors: ManifestError[] = [];
  for (const [path, group] of groups) errors.push(...groupErrors(raw, path, group));
  return { valid: false, errors, truncated };
}
