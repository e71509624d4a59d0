/**
 * Writes schema/manifest.schema.json from the TypeBox manifest schema.
 * Run with `npm run gen:schema` after changing src/contract/manifest/schema.ts.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderManifestJsonSchema } from '../src/contract/manifest/json-schema.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(repoRoot, 'schema', 'manifest.schema.json');
writeFileSync(target, renderManifestJsonSchema());
console.log(`wrote ${path.relative(repoRoot, target)}`);
