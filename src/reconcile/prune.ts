/**
 * `cronix prune`: removes every owned entry of an app (or of every app) from a backend, with
 * the spec files of their jobs: the way to uninstall what `apply` installed. Under the apply lock.
 */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Backend, OwnedEntry } from './backend.js';
import { takeApplyLock, type ApplyEvent } from './apply.js';
import { compareEntries } from './plan.js';
import { removeSpecFile, specFilePath } from './spec-files.js';
import { existsSync } from 'node:fs';

/** Options of {@link prune}. */
export interface PruneOptions {
  /** Only this app's entries; undefined = every app's. */
  app?: string;
  specDir: string;
  /** List what would go, change nothing. */
  dryRun: boolean;
  lockWaitMs?: number;
  onEvent?: (event: ApplyEvent) => void;
}

/** What prune removed (or would remove). */
export interface PruneResult {
  entries: OwnedEntry[];
  specFiles: string[];
  applied: boolean;
}

function specFilesOf(backend: Backend, specDir: string, entries: readonly OwnedEntry[]): string[] {
  if (backend.localSpecFiles === false) return [];
  const paths = new Set(entries.map((e) => specFilePath(specDir, e.app, e.job)));
  return [...paths].filter((p) => existsSync(p)).sort();
}

/** Removes (or, with `dryRun`, lists) the owned entries of `app` and their spec files. */
export async function prune(backend: Backend, options: PruneOptions): Promise<PruneResult> {
  const listed = async (): Promise<OwnedEntry[]> =>
    (await backend.list(options.app)).sort(compareEntries);
  if (options.dryRun) {
    const entries = await listed();
    return { entries, specFiles: specFilesOf(backend, options.specDir, entries), applied: false };
  }
  const lockDir =
    backend.localSpecFiles === false
      ? join(tmpdir(), `cronix-apply-${backend.name}`)
      : options.specDir;
  const lease = await takeApplyLock(lockDir, options.lockWaitMs);
  try {
    const entries = await listed();
    const specFiles = specFilesOf(backend, options.specDir, entries);
    if (entries.length > 0) await backend.apply({ deletes: entries, updates: [], creates: [] });
    const emit = options.onEvent ?? (() => undefined);
    for (const entry of entries) emit({ event: 'entry-deleted', entry });
    for (const path of specFiles) {
      removeSpecFile(path);
      emit({ event: 'spec-removed', path });
    }
    return { entries, specFiles, applied: true };
  } finally {
    await lease.release();
  }
}
