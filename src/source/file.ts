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
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.byteLength > MAX_MANIFEST_BYTES) {
      return {
        ok: false,
        errors: [{ path: '', message: `manifest file ${path} is larger than 10 MiB` }],
      };
    }
    text = bytes.toString('utf8');
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
  return parseManifestText(text, path);
}
