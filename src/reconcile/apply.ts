/**
 * `cronix apply` (SPEC §6): under the apply lock, plan the desired entries against the backend,
 * write the spec files, apply deletes → updates → creates, then remove the spec files of jobs
 * that are gone. An unchanged manifest changes nothing: no file written, no reload, no API
 * write, no event (so no INFO line).
 */
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlockBackend } from '../locks/flock.js';
import { LockConfigError, LockUnavailableError, type Lease } from '../locks/types.js';
import {
  BackendConfigError,
  type AdoptReport,
  type Backend,
  type DesiredEntry,
  type OwnedEntry,
} from './backend.js';
import { changeSetOf, plan, planChangesEntries, type Plan } from './plan.js';
import {
  diffSpecFiles,
  removeSpecFile,
  SPEC_FILE_MODE,
  writeSpecFile,
  type SpecFileChanges,
} from './spec-files.js';
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../io/atomic.js';

/** One actual change, reported after it happened (the CLI prints one INFO line each). */
export type ApplyEvent =
  | { event: 'entry-deleted'; entry: OwnedEntry }
  | { event: 'entry-updated'; entry: DesiredEntry; previousHash: string; reason: string }
  | { event: 'entry-created'; entry: DesiredEntry }
  | { event: 'spec-written'; path: string; app: string; job: string }
  | { event: 'spec-removed'; path: string }
  /** `prune` removed the shim's state folder of a job (`<state-dir>/<app>.<job>`). */
  | { event: 'state-removed'; path: string };

/** A plan plus what it does to the spec dir. */
export interface ReconcilePlan {
  plan: Plan;
  specFiles: SpecFileChanges;
}

/** Result of {@link applyReconcile}. */
export interface ReconcileResult extends ReconcilePlan {
  /** False for a dry run, and when refusals stopped the plan. */
  applied: boolean;
}

/** Options of {@link planReconcile} and {@link applyReconcile}. */
export interface ReconcileOptions {
  /** The manifest's app (its owned entries may be deleted). */
  app: string;
  /** `--spec-dir`. */
  specDir: string;
  /** Plan only. */
  dryRun?: boolean;
  /** How long to wait for another apply holding the lock (default 30 s). */
  lockWaitMs?: number;
  /** Receives one event per actual change. */
  onEvent?: (event: ApplyEvent) => void;
}

/** The apply lock is held by another process for longer than the wait. */
export class ApplyLockedError extends Error {
  override name = 'ApplyLockedError';
}

/** The apply lock cannot be taken (unwritable spec dir): exit 1. */
export class ApplyLockError extends Error {
  override name = 'ApplyLockError';
}

const usesSpecFiles = (backend: Backend): boolean => backend.localSpecFiles !== false;

/** Plans without writing anything (no lock, the spec dir is not created). */
export async function planReconcile(
  desired: readonly DesiredEntry[],
  backend: Backend,
  options: Pick<ReconcileOptions, 'app' | 'specDir'>,
): Promise<ReconcilePlan> {
  const owned = await backend.list(options.app);
  const p = plan(desired, owned, backend, { app: options.app });
  const specFiles = usesSpecFiles(backend)
    ? diffSpecFiles(options.specDir, options.app, desired)
    : { write: [], remove: [] };
  return { plan: p, specFiles };
}

/** Whether a reconcile plan changes anything (entries or spec files). */
export function reconcileChanges(r: ReconcilePlan): boolean {
  return (
    planChangesEntries(r.plan) || r.specFiles.write.length > 0 || r.specFiles.remove.length > 0
  );
}

/**
 * Takes the apply lock `<dir>/apply.lock` (flock), waiting up to `waitMs`.
 * @throws {ApplyLockedError | ApplyLockError}
 */
export async function takeApplyLock(dir: string, waitMs = 30_000): Promise<Lease> {
  const locks = new FlockBackend(dir);
  const deadline = Date.now() + waitMs;
  for (;;) {
    let result;
    try {
      result = await locks.acquire('apply', {
        ttlMs: 0,
        holder: { pid: process.pid, host: hostname(), acquiredAt: Date.now() },
      });
    } catch (err) {
      if (err instanceof LockConfigError || err instanceof LockUnavailableError) {
        throw new ApplyLockError(
          `cannot take the apply lock in ${dir}: ${err.message.replace(/; pass --lock-dir.*$/, '')}; pass --spec-dir with a writable directory`,
        );
      }
      throw err;
    }
    if (result.ok) return result.lease;
    if (Date.now() >= deadline) {
      const h = result.holder;
      throw new ApplyLockedError(
        `another cronix apply holds ${join(dir, 'apply.lock')}${h ? ` (pid ${h.pid} on ${h.host})` : ''}; try again when it has finished`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Spec files as they were, to put back when the backend fails after they were written. */
function snapshot(paths: readonly string[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const path of paths) {
    try {
      out.set(path, readFileSync(path, 'utf8'));
    } catch {
      out.set(path, null);
    }
  }
  return out;
}

function restore(saved: Map<string, string | null>): void {
  for (const [path, content] of saved) {
    try {
      if (content === null) removeSpecFile(path);
      else writeFileAtomic(path, content, SPEC_FILE_MODE, { exactMode: true });
    } catch {
      // best effort: the original error is what the operator needs to see
    }
  }
}

/**
 * Plans and, unless `dryRun` or refused, applies: spec files written first (a new entry never
 * fires without its spec), then the backend's deletes → updates → creates, then spec files of
 * removed jobs deleted. If the backend fails, the spec files are put back as they were.
 * @throws {ApplyLockedError | ApplyLockError} and the backend's errors.
 */
export async function applyReconcile(
  desired: readonly DesiredEntry[],
  backend: Backend,
  options: ReconcileOptions,
): Promise<ReconcileResult> {
  if (options.dryRun)
    return { ...(await planReconcile(desired, backend, options)), applied: false };
  const lockDir = usesSpecFiles(backend)
    ? options.specDir
    : join(tmpdir(), `cronix-apply-${backend.name}`);
  const lease = await takeApplyLock(lockDir, options.lockWaitMs);
  try {
    const planned = await planReconcile(desired, backend, options);
    if (planned.plan.refusals.length > 0 || !reconcileChanges(planned)) {
      return { ...planned, applied: planned.plan.refusals.length === 0 };
    }
    const emit = options.onEvent ?? (() => undefined);
    const { plan: p, specFiles } = planned;
    const saved = snapshot(specFiles.write.map((w) => w.path));
    try {
      for (const w of specFiles.write) writeSpecFile(w);
      if (planChangesEntries(p)) await backend.apply(changeSetOf(p));
    } catch (err) {
      restore(saved);
      throw err;
    }
    for (const w of specFiles.write)
      emit({ event: 'spec-written', path: w.path, app: w.app, job: w.job });
    for (const entry of p.deletes) emit({ event: 'entry-deleted', entry });
    for (const u of p.updates) {
      emit({
        event: 'entry-updated',
        entry: u.entry,
        previousHash: u.previous.hash,
        reason: u.reason,
      });
    }
    for (const entry of p.creates) emit({ event: 'entry-created', entry });
    for (const path of specFiles.remove) {
      removeSpecFile(path);
      emit({ event: 'spec-removed', path });
    }
    return { ...planned, applied: true };
  } finally {
    await lease.release();
  }
}

/** What {@link adoptReconcile} did, and the plan as it stands afterwards. */
export interface AdoptResult {
  report: AdoptReport;
  /** The plan after adoption (`creates` are entries the public reconciler had not installed). */
  after: ReconcilePlan;
  /** True when the plan was refused: nothing was adopted. */
  refused: boolean;
}

/**
 * `cronix adopt` (SPEC §14): under the apply lock, writes the spec files, then lets the backend
 * replace the public cronix reconciler's entries of this app with ours in one step each. A
 * refused plan adopts nothing. With `dryRun` only reports what would be adopted.
 * @throws {BackendConfigError} when the backend cannot adopt, and the errors of apply.
 */
export async function adoptReconcile(
  desired: readonly DesiredEntry[],
  backend: Backend,
  options: ReconcileOptions,
): Promise<AdoptResult> {
  const adopt = backend.adopt?.bind(backend);
  if (adopt === undefined) {
    throw new BackendConfigError(
      `--backend ${backend.name} cannot adopt: the public cronix reconciler installs entries only for crontab, systemd and kubernetes`,
    );
  }
  const first = await planReconcile(desired, backend, options);
  if (first.plan.refusals.length > 0)
    return { report: { adopted: [], removed: [] }, after: first, refused: true };
  if (options.dryRun) {
    return { report: await adopt(desired, first.plan.app, true), after: first, refused: false };
  }
  const lockDir = usesSpecFiles(backend)
    ? options.specDir
    : join(tmpdir(), `cronix-apply-${backend.name}`);
  const lease = await takeApplyLock(lockDir, options.lockWaitMs);
  try {
    const planned = await planReconcile(desired, backend, options);
    const saved = snapshot(planned.specFiles.write.map((w) => w.path));
    let report: AdoptReport;
    try {
      for (const w of planned.specFiles.write) writeSpecFile(w);
      report = await adopt(desired, planned.plan.app, false);
    } catch (err) {
      restore(saved);
      throw err;
    }
    return { report, after: await planReconcile(desired, backend, options), refused: false };
  } finally {
    await lease.release();
  }
}
