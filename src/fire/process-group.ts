/**
 * Process groups of command jobs (SPEC §11): a command runs as the leader of a process group of
 * its own (`setsid`), so stopping it means signalling the whole group — SIGTERM, then SIGKILL
 * after the graceful stop — and waiting until no process of the group is left.
 *
 * "Left" is read from `/proc` on Linux: a zombie (state `Z`) is dead for this purpose, since a
 * zombie that nobody reaps (an init that does not reap orphans, as in some containers) still
 * counts for `kill(-pgid, 0)`. Where `/proc` cannot be read, `kill(-pgid, 0)` decides.
 *
 * A process's identity across a daemon crash is its pid plus its start time: the boot id
 * (`/proc/sys/kernel/random/boot_id`) and field 22 of `/proc/<pid>/stat` (clock ticks after
 * boot). A pid reused by another process, or one from before a reboot or on another host, has
 * another identity, so it is never signalled.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** What `/proc/<pid>/stat` says about a process. */
export interface ProcStat {
  pid: number;
  /** One letter: R S D Z T … */
  state: string;
  /** Process group id. */
  pgrp: number;
  /** Field 22: start time in clock ticks after boot. */
  startTicks: string;
}

/** Longest wait for a group to vanish after SIGKILL. */
const KILL_WAIT_MS = 5_000;

let cachedBootId: string | null | undefined;

/** This boot's id, or null where the OS does not tell. */
export function bootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

/** Parses `/proc/<pid>/stat` (the command name may hold spaces and parentheses). */
export function parseStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  const pid = Number.parseInt(text, 10);
  if (close < 0 || !Number.isInteger(pid)) return null;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state), so field N is fields[N - 3]
  const state = fields[0];
  const pgrp = Number(fields[2]);
  const startTicks = fields[19];
  if (state === undefined || !Number.isInteger(pgrp) || startTicks === undefined) return null;
  return { pid, state, pgrp, startTicks };
}

/** The stat of a process, or null when it does not exist (or `/proc` cannot be read). */
export function readStat(pid: number): ProcStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** `<boot id>:<start ticks>` of a running process, or null where it cannot be known. */
export function processStartTime(pid: number): string | null {
  const boot = bootId();
  const stat = readStat(pid);
  return boot === null || stat === null ? null : `${boot}:${stat.startTicks}`;
}

const isDead = (state: string): boolean => state === 'Z' || state === 'X' || state === 'x';

/** Live (non-zombie) processes of a group, or null when `/proc` cannot be listed. */
export function groupMembers(pgid: number): number[] | null {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return null;
  }
  const out: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat !== null && stat.pgrp === pgid && !isDead(stat.state)) out.push(stat.pid);
  }
  return out;
}

/** Sends `signal` to a process group (or a process); false when it no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0, group = true): boolean {
  try {
    process.kill(group ? -pgid : pgid, signal);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    if (code === 'EPERM') return true; // exists, but is not ours to signal
    throw err;
  }
}

/** Whether any live process of the group is left. */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const members = groupMembers(pgid);
  return members === null ? true : members.length > 0;
}

/** Whether a single process is alive (not a zombie). */
export function processAlive(pid: number): boolean {
  if (!signalGroup(pid, 0, false)) return false;
  const stat = readStat(pid);
  return stat === null ? true : !isDead(stat.state);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `alive` until it is false or `ms` have passed; true when it ended in time. */
async function waitGone(alive: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  let step = 20;
  for (;;) {
    if (!alive()) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await sleep(Math.min(step, left));
    step = Math.min(step * 2, 200);
  }
}

/** How a stop went. */
export interface StopReport {
  /** SIGKILL was needed: something outlived the graceful stop. */
  killed: boolean;
  /** Something was still alive after SIGKILL and the wait for it (a process in uninterruptible sleep). */
  survivors: boolean;
}

/**
 * Stops targets: SIGTERM, up to `graceMs` for them to exit, then SIGKILL and up to 5 s more.
 * `send` signals them, `alive` says whether any is left.
 */
async function terminate(
  send: (signal: NodeJS.Signals) => void,
  alive: () => boolean,
  graceMs: number,
): Promise<StopReport> {
  if (!alive()) return { killed: false, survivors: false };
  send('SIGTERM');
  if (await waitGone(alive, graceMs)) return { killed: false, survivors: false };
  send('SIGKILL');
  const gone = await waitGone(alive, KILL_WAIT_MS);
  return { killed: true, survivors: !gone };
}

/** Stops a whole process group: SIGTERM, then SIGKILL after `graceMs`; resolves when it is gone. */
export function stopGroup(pgid: number, graceMs: number): Promise<StopReport> {
  return terminate(
    (signal) => void signalGroup(pgid, signal),
    () => groupAlive(pgid),
    graceMs,
  );
}

/** Stops single processes the same way (leftovers whose group leader is gone). */
export function stopProcesses(pids: readonly number[], graceMs: number): Promise<StopReport> {
  return terminate(
    (signal) => {
      for (const pid of pids) signalGroup(pid, signal, false);
    },
    () => pids.some(processAlive),
    graceMs,
  );
}
