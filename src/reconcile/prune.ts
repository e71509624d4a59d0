/**
 * `cronix prune`: removes every owned entry of an app (or of every app) from a backend, with
 * the spec files of their jobs and the shim's state of those apps (`<state-dir>/<app>.<job>/`:
 * succeeded run keys, last success, notification state): the way to uninstall what `apply`
 * installed. Under the apply lock. Lock files stay: deleting a lock file that a shim may be
 * waiting on would let two holders lock different inodes.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Backend, OwnedEntry } from './backend.js';
import { takeApplyLock, type ApplyEvent } from './apply.js';
import { compareEntries } from './plan.js';
import { removeSpecFile, specFilePath } from './spec-files.js';

/** Options of {@link prune}. */
export interface PruneOptions {
  /** Only this app's entries; undefined = every app's. */
  app?: string;
  specDir: string;
  /** The shim's state dir (`--state-dir`): the state of the pruned apps' jobs is removed. */
  stateDir?: string;
  /** List what would go, change nothing. */
  dryRun: boolean;
  lockWaitMs?: number;
  onEvent?: (event: ApplyEvent) => void;
}

/** What prune removed (or would remove). */
export interface PruneResult {
  entries: OwnedEntry[];
  specFiles: string[];
  /** `<state-dir>/<app>.<job>` folders of the pruned apps. */
  stateDirs: string[];
  applied: boolean;
}

/**
 * The state folders of the apps of `entries` (and of `app`): `<app>.<job>` in the state dir,
 * also of jobs an earlier apply already removed.
 */
function stateDirsOf(
  stateDir: string | undefined,
  entries: readonly OwnedEntry[],
  app: string | undefined,
): string[] {
  if (stateDir === undefined || !existsSync(stateDir)) return [];
  const apps = new Set(entries.map((e) => e.app));
  if (app !== undefined) apps.add(app);
  let names: string[];
  try {
    names = readdirSync(stateDir);
  } catch {
    return [];
  }
  return names
    .filter((n) => {
      const m = /^([a-z][a-z0-9-]{0,62})\.[a-z][a-z0-9-]{0,62}$/.exec(n);
      return m !== null && apps.has(m[1] as string);
    })
    .map((n) => join(stateDir, n))
    .sort();
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
    return {
      entries,
      specFiles: specFilesOf(backend, options.specDir, entries),
      stateDirs: stateDirsOf(options.stateDir, entries, options.app),
      applied: false,
    };
  }
  const lockDir =
    backend.localSpecFiles === false
      ? join(tmpdir(), `cronix-apply-${backend.name}`)
      : options.specDir;
  const lease = await takeApplyLock(lockDir, options.lockWaitMs);
  try {
    const entries = await listed();
    const specFiles = specFilesOf(backend, options.specDir, entries);
    const stateDirs = stateDirsOf(options.stateDir, entries, options.app);
    if (entries.length > 0) await backend.apply({ deletes: entries, updates: [], creates: [] });
    const emit = options.onEvent ?? (() => undefined);
    for (const entry of entries) emit({ event: 'entry-deleted', entry });
    for (const path of specFiles) {
      removeSpecFile(path);
      emit({ event: 'spec-removed', path });
    }
    for (const path of stateDirs) {
      rmSync(path, { recursive: true, force: true });
      emit({ event: 'state-removed', path });
    }
    return { entries, specFiles, stateDirs, applied: true };
  } finally {
    await lease.release();
  }
}
