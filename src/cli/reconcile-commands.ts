/**
 * Registers the reconciler's commands (`plan`/`diff`, `apply`, `drift`,
 * `list`, `show`, `prune`) on the CLI program. Owned by the reconciler work.
 */
import type { Command } from 'commander';

/** Adds the reconciler commands to `program`. */
export function registerReconcileCommands(_program: Command): void {
  // filled in by the reconciler (issue 4)
}
