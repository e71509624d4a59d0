/**
 * Registers the daemon's commands (`serve`, and the API clients `jobs`, `runs`,
 * `start`, `cancel`, `pause`, `resume`, `replay`) on the CLI program.
 */
import type { Command } from 'commander';

/** Adds the daemon commands to `program`. */
export function registerDaemonCommands(_program: Command): void {
  // filled in by the daemon (issue 5)
}
