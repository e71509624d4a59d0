/**
 * Loading a manifest from a local file. (URL sources — `file://`, `https://`,
 * loopback `http://` with a signed GET — join this room with the reconciler.)
 */
import { readFile } from 'node:fs/promises';
import { parseManifestText, type ManifestParseResult } from '../contract/manifest/index.js';

/** Largest manifest file accepted (10 MiB, as for URL sources). */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

/** Reads and parses a manifest file; I/O problems become one error at path `""`. */
export async function loadManifestFile(path: string): Promise<ManifestParseResult> {
  const text = await readManifestText(path);
  return typeof text === 'string' ? parseManifestText(text, path) : text;
}

/**
 * Reads many manifest files with up to `ahead` reads in flight while the caller parses, in
 * order: `cronix serve` with 400 manifest files waited for each read in turn (~0.1 s of its
 * start-up idle).
 */
export async function* loadManifestFiles(
  paths: readonly string[],
  ahead = 8,
): AsyncGenerator<{ path: string; result: ManifestParseResult }> {
  const reads: Promise<string | ManifestParseResult>[] = [];
  for (let i = 0; i < paths.length; i++) {
    for (let j = reads.length; j < Math.min(paths.length, i + ahead); j++)
      reads.push(readManifestText(paths[j] as string));
    const path = paths[i] as string;
    const text = await (reads[i] as Promise<string | ManifestParseResult>);
    delete reads[i];
    yield { path, result: typeof text === 'string' ? parseManifestText(text, path) : text };
  }
}

/** A manifest file's text, or its I/O problem as a parse result. Never rejects. */
async function readManifestText(path: string): Promise<string | ManifestParseResult> {
  try {
    const bytes = await readFile(path);
    if (bytes.byteLength > MAX_MANIFEST_BYTES) {
      return {
        ok: false,
        errors: [{ path: '', message: `manifest file ${path} is larger than 10 MiB` }],
      };
    }
    return bytes.toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : code;
    return {
      ok: false,
      errors: [{ path: '', message: `cannot read manifest file ${path}: ${reason}` }],
    };
  }
}
