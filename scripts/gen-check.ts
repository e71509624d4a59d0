/**
 * Writes src/contract/manifest/compiled-check.ts (the manifest schema compiled
 * ahead of time for `cronix trigger`). Run with `npm run gen:check` after
 * changing src/contract/manifest/schema.ts.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCompiledCheck } from '../src/contract/manifest/compiled-source.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(repoRoot, 'src', 'contract', 'manifest', 'compiled-check.ts');
writeFileSync(target, renderCompiledCheck());
console.log(`wrote ${path.relative(repoRoot, target)}`);
