/**
 * Atomic file replacement: write a temp file in the same directory, then
 * rename(2) it over the target, so a reader (node_exporter, the next shim, a
 * host scheduler) sees the old content or the new one, never half a file.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  openSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Set `mode` exactly (chmod before the rename), whatever the umask. Default false. */
  exactMode?: boolean;
  /** fsync the file before the rename and the directory after it (survives a power cut). */
  fsync?: boolean;
}

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path` with `data` atomically; the temp file is removed on failure.
 * The temp name starts with a dot and ends in `.tmp`, so globs such as
 * `*.prom` or `*.json` never pick it up.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o644,
  options: AtomicWriteOptions = {},
): void {
  const tmp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    writeFileSync(tmp, data, { mode });
    if (options.exactMode) chmodSync(tmp, mode);
    if (options.fsync) syncPath(tmp);
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing to clean up
    }
    throw err;
  }
  if (options.fsync) {
    try {
      syncPath(dirname(path));
    } catch {
      // some file systems refuse fsync on a directory; the rename itself is done
    }
  }
}
