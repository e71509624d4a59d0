/**
 * `concurrency_scope: global` in the daemon (SPEC §9 item 8): each attempt of
 * such a job takes the same Redis lock as the trigger shim (`<app>.<job>`,
 * same key prefix), checks the shim's record of succeeded run keys under it,
 * sends the fencing token, and records its success there before the lock is
 * released — so a daemon and host-mode shims, or several daemons, share one
 * job's lock and see each other's successes.
 *
 * One Redis lock is a mutex, so a global-scope job runs one attempt at a time
 * across the fleet: `max_concurrent` above 1 cannot be honoured and is refused
 * at start-up (see {@link globalScopeProblems}).
 */
import type { Manifest } from '../contract/manifest/types.js';
import { lockTtlMs } from '../contract/run.js';
import type { AttemptGuard, FireDeps } from '../fire/engine.js';
import type { Clock } from '../fire/types.js';
import type { StopSignal } from '../fire/stop.js';
import { createGuard } from '../locks/guard.js';
import { LockConfigError, LockUnavailableError } from '../locks/types.js';
import type { RedisBackend } from '../locks/redis.js';
import type { RegisteredJob } from './registry.js';

/** What a global-scope run takes before each attempt, and how it records its success. */
export interface RunGuard {
  guard: AttemptGuard;
  record: NonNullable<FireDeps['record']>;
}

/** Problems of global-scope jobs that no lock backend can fix (named by job). */
export function globalScopeProblems(manifests: readonly Manifest[]): string[] {
  const out: string[] = [];
  for (const m of manifests)
    for (const job of m.jobs) {
      const p = job.policy as { concurrency_scope: string; max_concurrent?: number };
      if (p.concurrency_scope === 'global' && (p.max_concurrent ?? 1) > 1)
        out.push(
          `job ${m.app}/${job.name}: concurrency_scope global takes one Redis lock per job, so ` +
            `max_concurrent ${p.max_concurrent} cannot be honoured; use max_concurrent 1 or scope host`,
        );
    }
  return out;
}

/** Whether any job needs the global lock backend. */
export function needsGlobalLocks(manifests: readonly Manifest[]): boolean {
  return manifests.some((m) => m.jobs.some((j) => j.policy.concurrency_scope === 'global'));
}

/**
 * Builds the per-run guards of global-scope jobs on one Redis connection,
 * opened again when it has dropped (a Redis restart must not leave the daemon
 * failing every global run for the rest of its life). While Redis cannot be
 * reached, attempts are refused (`lock-unavailable`: the run ends
 * `internal_error` with the reason) — fail closed, as the shim does.
 */
export class GlobalLocks {
  private current: Promise<RedisBackend> | null = null;

  constructor(
    private readonly connect: () => Promise<RedisBackend>,
    private readonly clock: Clock,
    /** Holder identity written beside each lock (Replace reads it). */
    private readonly self: { pid: number; host: string },
  ) {}

  /** Opens the first connection (start-up fails when Redis cannot be reached). */
  async open(): Promise<void> {
    await this.backend();
  }

  /** The guard of one run; undefined for a host-scope job (the lane is its lock). */
  for(job: RegisteredJob, runKey: string, signal: StopSignal): RunGuard | undefined {
    if (job.policy.concurrency_scope !== 'global') return undefined;
    const key = `${job.app}.${job.job.name}`;
    const concurrency = job.policy.concurrency;
    const guardOn = (backend: RedisBackend): AttemptGuard =>
      createGuard({
        backend: concurrency === 'Allow' ? null : backend,
        dedupe: { hasSucceeded: (k) => backend.hasSucceeded(k) },
        key,
        runKey,
        ttlMs: lockTtlMs(job.policy.timeout_seconds),
        // Enqueue queues in the daemon; against another holder of the lock it behaves as Forbid
        policy:
          concurrency === 'Replace' ? 'Replace' : concurrency === 'Allow' ? 'Allow' : 'Forbid',
        timeoutSeconds: job.policy.timeout_seconds,
        self: { ...this.self, acquiredAt: this.clock.now() },
        clock: this.clock,
        signal,
      });
    return {
      guard: {
        acquire: async (attempt) => {
          let backend: RedisBackend;
          try {
            backend = await this.backend();
          } catch (err) {
            if (err instanceof LockUnavailableError || err instanceof LockConfigError)
              return { ok: false, outcome: 'lock-unavailable', message: err.message };
            throw err;
          }
          return guardOn(backend).acquire(attempt);
        },
      },
      record: async ({ outcome }) => {
        if (outcome === 'success')
          await (await this.backend()).markSucceeded(runKey, this.clock.now(), key);
      },
    };
  }

  async close(): Promise<void> {
    const current = this.current;
    this.current = null;
    await current?.then((b) => b.close()).catch(() => undefined);
  }

  private async backend(): Promise<RedisBackend> {
    if (this.current) {
      const b = await this.current.catch(() => null);
      if (b?.connected) return b;
      void b?.close().catch(() => undefined);
    }
    const next = this.connect();
    this.current = next;
    next.catch(() => {
      if (this.current === next) this.current = null;
    });
    return next;
  }
}
