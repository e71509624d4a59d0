/**
 * The shipped JSON Schema (schema/manifest.schema.json) must match the TypeBox schema.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  JSON_SCHEMA_DIALECT,
  MANIFEST_SCHEMA_ID,
  buildManifestJsonSchema,
  renderManifestJsonSchema,
} from '../../src/contract/manifest/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const schemaPath = path.join(repoRoot, 'schema', 'manifest.schema.json');

describe('manifest JSON Schema', () => {
  it('the shipped file is up to date', () => {
    const shipped = readFileSync(schemaPath, 'utf8');
    if (shipped !== renderManifestJsonSchema()) {
      expect.fail(
        'schema/manifest.schema.json is stale: run `npm run gen:schema` and commit the result',
      );
    }
  });

  it('is a draft 2020-12 schema with an id, closed objects and editor hints', () => {
    const schema = buildManifestJsonSchema();
    expect(schema['$schema']).toBe(JSON_SCHEMA_DIALECT);
    expect(schema['$id']).toBe(MANIFEST_SCHEMA_ID);
    expect(schema['title']).toEqual(expect.any(String));
    const text = renderManifestJsonSchema();
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "$id"');
    // Every object schema is closed, so unknown fields are flagged in editors too.
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (node === null || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      if (record['type'] === 'object') expect(record['additionalProperties']).toBe(false);
      Object.values(record).forEach(visit);
    };
    visit(schema);
    const job = (schema['properties'] as Record<string, Record<string, Record<string, unknown>>>)[
      'jobs'
    ]?.['items'];
    expect(job?.['allOf']).toEqual([
      { oneOf: [{ required: ['schedule'] }, { required: ['schedules'] }] },
      { oneOf: [{ required: ['request'] }, { required: ['command'] }] },
    ]);
  });
});
