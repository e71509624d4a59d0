/**
 * `parseManifest`'s verdict without loading TypeBox, for hot paths that run
 * once per process (the trigger shim checks its spec on every fire). The
 * structural half is the schema compiled ahead of time (`compiled-check.ts`,
 * generated from the same `ManifestSchema`), the semantic half is the same
 * `checkSemantics`, and an accepted value is normalized by the same
 * `normalizeManifest`. So `acceptManifest(x)` is non-null exactly when
 * `parseManifest(x).ok`, with the same manifest; it just cannot say what is
 * wrong — call `parseManifest` for the messages (tested on random inputs in
 * test/contract/manifest-quick.test.ts).
 */
import { matchesManifestSchema } from './compiled-check.js';
import { normalizeManifest } from './normalize.js';
import type { ManifestInput } from './schema.js';
import { checkSemantics } from './semantic.js';
import type { Manifest } from './types.js';

/** The normalized manifest when `raw` is valid, else null (never throws). */
export function acceptManifest(raw: unknown): Manifest | null {
  try {
    if (!matchesManifestSchema(raw) || checkSemantics(raw).length > 0) return null;
    return normalizeManifest(raw as ManifestInput);
  } catch {
    return null; // parseManifest reports a crash as an error too
  }
}
