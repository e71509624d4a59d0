/**
 * Directory creation that cannot hang. Node 20's
 * `mkdirSync(…, { recursive: true })` loops forever (100 % CPU, deaf to
 * SIGTERM, since the event loop never turns) when mkdir(2) answers `ENOENT`
 * under an existing parent, e.g. `/proc/self/x`. The lock dir and the state
 * dir of `cronix trigger` both come from flags, so both go through here.
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Deepest chain of missing parents created; deeper paths fail with the last error. */
export const MAX_DIR_DEPTH = 64;

function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Creates `dir` and its missing parents (mode `mode`, default 0755), one
 * mkdir(2) per level, at most {@link MAX_DIR_DEPTH} levels.
 * @throws the errno error of the failing mkdir (`code` and `path` set), or
 *   `ENOTDIR` when a path component exists and is not a directory.
 */
export function ensureDirSync(dir: string, mode = 0o755, depth = 0): void {
  if (isDirectory(dir)) return;
  try {
    mkdirSync(dir, { mode });
    return;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'EEXIST') {
      if (isDirectory(dir)) return; // created concurrently
      throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR', path: dir });
    }
    const parent = path.dirname(dir);
    if (code !== 'ENOENT' || parent === dir || depth >= MAX_DIR_DEPTH) throw err;
    ensureDirSync(parent, mode, depth + 1);
  }
  try {
    mkdirSync(dir, { mode });
  } catch (err) {
    if (!(errnoCode(err) === 'EEXIST' && isDirectory(dir))) throw err;
  }
}
