/**
 * The supervisor's decisions (SPEC §17), pure and table-tested: the restart backoff, the crash
 * loop of a service, what a reload does to each instance, and what an exit is in the ledger.
 * No I/O, no clock, no timer: instants are passed in.
 */
import type { EffectiveService } from '../../contract/manifest/effective.js';
import type { RunOutcome } from '../store/types.js';

/**
 * The delay before restart number `exitsInARow` (1 = the first exit after a healthy spell):
 * `min_seconds · 2^(n−1)`, at most `max_seconds`, in ms.
 */
export function restartDelayMs(
  exitsInARow: number,
  restart: { min_seconds: number; max_seconds: number },
): number {
  const n = Math.max(1, Math.floor(exitsInARow));
  // 2^(n-1) grows past any ceiling quickly: cap the exponent so the product stays finite
  const seconds = Math.min(restart.min_seconds * 2 ** Math.min(n - 1, 40), restart.max_seconds);
  return seconds * 1000;
}

/**
 * The crash-loop state of one service: exit instants per instance within the window, and the
 * instances in a loop. A service is `failed` while any instance is in a loop.
 */
export interface CrashLoopState {
  /** Exit instants (ms) of each instance within the window, oldest first. */
  exits: ReadonlyMap<number, readonly number[]>;
  /** Instances in a crash loop. */
  looping: ReadonlySet<number>;
}

/** No exits, no loop. */
export const NO_CRASH_LOOP: CrashLoopState = { exits: new Map(), looping: new Set() };

/** What a crash-loop step says to notify. */
export type CrashLoopEvent = 'failed' | 'recovered' | null;

/** The crash-loop rule of a service. */
export interface CrashLoopRule {
  crash_loop_exits: number;
  crash_loop_window_seconds: number;
}

/**
 * Instance `instance` exited at `now`. It enters a loop with its `crash_loop_exits`-th exit within
 * the window; the service notifies `failed` when its first instance enters one (once: later
 * loops of the same spell say nothing).
 */
export function onExit(
  state: CrashLoopState,
  instance: number,
  now: number,
  rule: CrashLoopRule,
): { state: CrashLoopState; event: CrashLoopEvent } {
  const since = now - rule.crash_loop_window_seconds * 1000;
  const recent = [...(state.exits.get(instance) ?? []), now].filter((t) => t > since);
  const exits = new Map(state.exits);
  exits.set(instance, recent);
  if (state.looping.has(instance) || recent.length < rule.crash_loop_exits)
    return { state: { exits, looping: state.looping }, event: null };
  const looping = new Set(state.looping).add(instance);
  return { state: { exits, looping }, event: state.looping.size === 0 ? 'failed' : null };
}

/**
 * Instance `instance` stayed up `reset_after_seconds`, or left the service (stopped, removed):
 * it is out of its loop; the service notifies `recovered` when its last looping instance is —
 * only when `healthy` (an instance taken away has not recovered anything).
 */
export function onSettled(
  state: CrashLoopState,
  instance: number,
  healthy: boolean,
): { state: CrashLoopState; event: CrashLoopEvent } {
  const exits = new Map(state.exits);
  exits.delete(instance);
  if (!state.looping.has(instance))
    return { state: { exits, looping: state.looping }, event: null };
  const looping = new Set(state.looping);
  looping.delete(instance);
  return {
    state: { exits, looping },
    event: looping.size === 0 && healthy ? 'recovered' : null,
  };
}

/** How a process of an instance ended, as the runner says. */
export type InstanceExit =
  | { kind: 'exit'; code: number | null; signal: string | null }
  | { kind: 'spawn-error'; message: string }
  | { kind: 'stopped'; reason: string };

/**
 * The ledger's outcome and error of one start's end: stopped by cronix → `stopped` (with why);
 * exit code 0 → `success`; any other exit, a signal cronix did not send, or a program that could
 * not be started → `crashed` (a service is meant to keep running).
 */
export function exitOutcome(exit: InstanceExit): { outcome: RunOutcome; error: string | null } {
  switch (exit.kind) {
    case 'stopped':
      return { outcome: 'stopped', error: exit.reason };
    case 'spawn-error':
      return { outcome: 'crashed', error: exit.message };
    case 'exit':
      if (exit.code === 0) return { outcome: 'success', error: null };
      if (exit.code === null)
        return { outcome: 'crashed', error: `killed by signal ${exit.signal ?? 'unknown'}` };
      if (exit.code === 127 || exit.code === 126)
        return {
          outcome: 'crashed',
          error: `exit code ${exit.code} (the program could not be ${exit.code === 127 ? 'found' : 'executed'}; see the output)`,
        };
      return { outcome: 'crashed', error: `exit code ${exit.code}` };
  }
}

/** What a reload does to one instance index of a service. */
export type ReloadAction = 'start' | 'stop' | 'restart' | 'keep';

/**
 * The definition of a service that makes its instances what they are: everything but
 * `instances` (a new count adds or removes instances, it does not change the others) and
 * `notify` (who is told changes no process). Secrets' values are part of it: a rotated secret
 * restarts the instances that hold the old one.
 */
export function processShape(service: EffectiveService, secretValues: readonly string[]): string {
  const { instances: _count, notify: _notify, ...rest } = service;
  return JSON.stringify([rest, secretValues]);
}

/**
 * A reload's action for every instance index of one service: `old` and `next` are its
 * instance counts and process shapes before and after (null count: absent).
 */
export function planReload(
  old: { instances: number; shape: string } | null,
  next: { instances: number; shape: string } | null,
): ReloadAction[] {
  const n = Math.max(old?.instances ?? 0, next?.instances ?? 0);
  const out: ReloadAction[] = [];
  for (let i = 0; i < n; i++) {
    const had = old !== null && i < old.instances;
    const wants = next !== null && i < next.instances;
    if (had && !wants) out.push('stop');
    else if (!had && wants) out.push('start');
    else if (had && wants) out.push(old.shape === next.shape ? 'keep' : 'restart');
  }
  return out;
}
