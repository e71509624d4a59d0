/** Builds a scheduler's service supervisor from its dependencies (SPEC §17). */
import type { DaemonEmitter } from '../events.js';
import type { Ledger } from '../ledger.js';
import type { Notifications } from '../notifications.js';
import type { SchedulerDeps } from '../scheduler-deps.js';
import { Supervisor } from './supervisor.js';

/** The scheduler's own parts the supervisor shares. */
export interface SupervisorParts {
  ledger: Ledger;
  events: DaemonEmitter;
  notifications: Notifications | null;
  /** The scheduler is stopping: no instance starts any more. */
  stopping(): boolean;
}

/**
 * The supervisor of one scheduler (one leader term in a cluster), or null without
 * `deps.services` or `deps.commands`. It starts processes only while the scheduler may start
 * attempts (the SQLite owner's or the leader's check).
 */
export function buildSupervisor(deps: SchedulerDeps, parts: SupervisorParts): Supervisor | null {
  const { services, commands, leader, clock } = deps;
  if (!services || !commands) return null;
  return new Supervisor({
    clock,
    runner: commands.runner,
    hostEnv: commands.hostEnv,
    logs: commands.logs,
    ledger: parts.ledger,
    events: parts.events,
    mayStart: () => (parts.stopping() ? 'the daemon is stopping' : (leader?.mayAttempt() ?? null)),
    orphanGraceCapSeconds: services.orphanGraceCapSeconds ?? Number.POSITIVE_INFINITY,
    secretEnvFor: (app, name) => services.secretEnvFor(app, name),
    notify: (kind, run, targets) => parts.notifications?.serviceEvent(kind, run, targets),
  });
}
