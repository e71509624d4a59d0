/**
 * Loading a manifest from a local file. (URL sources — `file://`, `https://`,
 * loopback `http://` with a signed GET — join this room with the reconciler.)
 */
import { open, type FileHandle } from 'node:fs/promises';
import { parseManifestText, type ManifestParseResult } from '../contract/manifest/index.js';
import { attachDates } from './dates-files.js';

/** Largest manifest file accepted (10 MiB, as for URL sources). */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;
/** The first read's room when the file's size says less (a pipe). */
const READ_BYTES = 64 * 1024;

/** Reads and parses a manifest file; I/O problems become one error at path `""`. */
export async function loadManifestFile(path: string): Promise<ManifestParseResult> {
  const text = await readManifestText(path);
  return typeof text === 'string' ? parseWithDates(text, path) : text;
}

/**
 * Parses a manifest file's text, then reads the `dates_file` of its blackout windows (relative
 * to the file's directory, `dates-files.ts`): their problems are the manifest's errors.
 */
async function parseWithDates(text: string, path: string): Promise<ManifestParseResult> {
  const result = parseManifestText(text, path);
  if (!result.ok) return result;
  const errors = await attachDates(result.manifest, path, text);
  return errors.length === 0 ? result : { ok: false, errors };
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
    yield { path, result: typeof text === 'string' ? await parseWithDates(text, path) : text };
  }
}

const MIB = 1024 * 1024;

/** Why a manifest file could not be read, as a parse result. */
function unreadable(message: string): ManifestParseResult {
  return { ok: false, errors: [{ path: '', message }] };
}

function tooLarge(path: string, size?: number): ManifestParseResult {
  const found = size === undefined ? '' : ` (${(size / MIB).toFixed(1)} MiB)`;
  return unreadable(`manifest file ${path} is larger than 10 MiB${found}`);
}

/**
 * A manifest file's text, or its I/O problem as a parse result. Never rejects. The size is
 * checked before anything is read: a regular file larger than {@link MAX_MANIFEST_BYTES} is
 * refused from its size, a device (`/dev/zero`, a terminal) is refused outright, and a pipe
 * (`<(generate-manifest)`) is read up to the limit plus one byte, never further.
 */
async function readManifestText(path: string): Promise<string | ManifestParseResult> {
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'r');
    const st = await file.stat();
    if (st.isDirectory()) return unreadable(`cannot read manifest file ${path}: is a directory`);
    if (!st.isFile() && !st.isFIFO())
      return unreadable(
        `cannot read manifest file ${path}: not a regular file (a device or socket); give the path of a JSON or YAML file`,
      );
    if (st.isFile() && st.size > MAX_MANIFEST_BYTES) return tooLarge(path, st.size);
    // room for the file as it is (a pipe's size is 0), grown by doubling up to the limit + 1:
    // a 10 MiB buffer per file cost a daemon with 40 manifests ~90 MB of resident memory (glibc
    // raises its mmap threshold after freeing one, and keeps the heap that follows) and 400 MB of
    // zeroing
    let buf = Buffer.allocUnsafe(
      Math.min(MAX_MANIFEST_BYTES + 1, Math.max(READ_BYTES, st.size + 1)),
    );
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(MAX_MANIFEST_BYTES + 1, buf.length * 2));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const { bytesRead } = await file.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > MAX_MANIFEST_BYTES) return tooLarge(path); // it grew, or a pipe: read no further
    }
    return buf.toString('utf8', 0, n);
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
    return unreadable(`cannot read manifest file ${path}: ${reason}`);
  } finally {
    await file?.close().catch(() => undefined);
  }
}
