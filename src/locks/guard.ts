/**
 * The per-attempt guard of the shim and of the daemon's global-scope jobs: takes the concurrency lock (host flock or
 * global Redis), applies Forbid / Replace, checks for a duplicate run key
 * under the lock, and refreshes a global lease every TTL/3 while the attempt
 * runs. The engine calls it before every attempt (SPEC §5.5, §5.8).
 */
import type { Clock } from '../fire/types.js';
import type { StopSignal } from '../fire/stop.js';
import type { AttemptGuard, AttemptHold, AttemptRefusal } from '../fire/engine.js';
import {
  LockConfigError,
  LockUnavailableError,
  type Holder,
  type Lease,
  type LockBackend,
} from '../locks/types.js';

/** Where succeeded run keys are recorded (host state dir or Redis). */
export interface DedupeStore {
  hasSucceeded(runKey: string): boolean | Promise<boolean>;
}

/** Inputs of {@link createGuard}. */
export interface GuardOptions {
  /** None for `Allow`. */
  backend: LockBackend | null;
  dedupe: DedupeStore;
  key: string;
  runKey: string;
  ttlMs: number;
  policy: 'Allow' | 'Forbid' | 'Replace';
  timeoutSeconds: number;
  /**
   * Seconds a replaced holder may need to stop its attempt beyond the usual wait (a command
   * job's `graceful_stop_seconds`: its process group gets SIGTERM, then SIGKILL after that).
   * The Replace wait is `max(timeout_seconds/2, 5) + stopGraceSeconds`. Default 0.
   */
  stopGraceSeconds?: number;
  self: Holder;
  clock: Clock;
  /** Sends SIGTERM to a local holder (injected for tests). */
  kill?: (pid: number) => void;
  /** Called when Replace stopped the previous holder. */
  onReplaced?: (holder: Holder) => void;
  /** Called when a refresh could not reach the backend (the lease still has TTL left). */
  onRefreshError?: (err: Error) => void;
  /** Stops a Replace wait early (SIGTERM, the process deadline): the fire ends `stopped`. */
  signal?: StopSignal;
}

const refusal = (outcome: AttemptRefusal['outcome'], message: string): AttemptRefusal => ({
  ok: false,
  outcome,
  message,
});

function describe(holder: Holder | null): string {
  return holder ? `held by pid ${holder.pid} on ${holder.host}` : 'held by an unknown holder';
}

function defaultKill(pid: number): void {
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Builds the guard the engine calls before each attempt. */
export function createGuard(o: GuardOptions): AttemptGuard {
  const duplicate = async (): Promise<boolean> => await o.dedupe.hasSucceeded(o.runKey);

  async function replace(holder: Holder | null): Promise<Lease | AttemptRefusal> {
    if (!holder || holder.host !== o.self.host || holder.pid === o.self.pid) {
      return refusal(
        'lock-contended',
        `${describe(holder)}; Replace can only stop a holder on this host`,
      );
    }
    (o.kill ?? defaultKill)(holder.pid);
    const waitMs = (Math.max(o.timeoutSeconds / 2, 5) + (o.stopGraceSeconds ?? 0)) * 1000;
    const deadline = o.clock.now() + waitMs;
    while (o.clock.now() < deadline) {
      if (!(await o.clock.sleep(100, o.signal))) {
        return refusal('stopped', 'stopped while waiting for the replaced holder to exit');
      }
      const again = await o.backend!.acquire(o.key, { ttlMs: o.ttlMs, holder: o.self });
      if (again.ok) {
        o.onReplaced?.(holder);
        return again.lease;
      }
    }
    return refusal(
      'lock-contended',
      `previous holder pid ${holder.pid} did not release the lock within ${waitMs / 1000}s of SIGTERM`,
    );
  }

  function hold(lease: Lease): AttemptHold {
    const lost = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    if (lease.fencingToken !== undefined) {
      // a TTL-bound (global) lease: keep it alive while the attempt runs
      timer = setInterval(
        () => {
          lease.refresh().then(
            (stillOurs) => {
              if (!stillOurs) lost.abort();
            },
            (err: Error) => o.onRefreshError?.(err),
          );
        },
        Math.max(50, Math.floor(o.ttlMs / 3)),
      );
      timer.unref();
    }
    return {
      ok: true,
      ...(lease.fencingToken !== undefined ? { fencingToken: lease.fencingToken } : {}),
      lost: lost.signal,
      release: async () => {
        if (timer) clearInterval(timer);
        await lease.release().catch(() => false);
      },
    };
  }

  return {
    async acquire(attempt: number): Promise<AttemptHold | AttemptRefusal> {
      try {
        if (!o.backend) {
          if (attempt === 1 && (await duplicate()))
            return refusal('duplicate', 'run key already succeeded');
          return { ok: true, release: async () => undefined };
        }
        const first = await o.backend.acquire(o.key, { ttlMs: o.ttlMs, holder: o.self });
        let lease: Lease;
        if (first.ok) lease = first.lease;
        else if (o.policy === 'Replace' && attempt === 1) {
          const replaced = await replace(first.holder);
          if ('ok' in replaced) return replaced;
          lease = replaced;
        } else {
          return refusal('lock-contended', describe(first.holder));
        }
        if (await duplicate()) {
          await lease.release().catch(() => false);
          return refusal('duplicate', 'run key already succeeded');
        }
        return hold(lease);
      } catch (err) {
        if (err instanceof LockUnavailableError) return refusal('lock-unavailable', err.message);
        if (err instanceof LockConfigError) return refusal('internal-error', err.message);
        throw err;
      }
    },
  };
}
