/** Small builders shared by the manifest's TypeBox schemas (`schema.ts`, `service-schema.ts`). */
import { Type, type SchemaOptions, type TLiteral, type TUnion } from '@sinclair/typebox';
import { ENV_NAME_PATTERN } from './defaults.js';

/** A union of string literals (rendered as `anyOf` of `const` in JSON Schema). */
export function literalUnion<const T extends readonly [string, ...string[]]>(
  values: T,
  options: SchemaOptions,
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<TLiteral<T[number]>[]>;
}

/** An integer field with inclusive bounds. */
export function int(min: number, max: number | undefined, options: SchemaOptions) {
  return Type.Integer(
    max === undefined ? { minimum: min, ...options } : { minimum: min, maximum: max, ...options },
  );
}

/** A map from environment variable names to strings matching `valuePattern`. */
export function envMap(valuePattern: string, maxProperties: number, description: string) {
  return Type.Record(
    Type.String({ pattern: ENV_NAME_PATTERN }),
    Type.String({ pattern: valuePattern }),
    { additionalProperties: false, maxProperties, description, default: {} },
  );
}
