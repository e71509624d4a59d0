/**
 * After a crash (SPEC §11): the processes of command runs the ledger still shows `running` are
 * stopped — SIGTERM, then SIGKILL after the job's graceful stop — before those runs end
 * `crashed`, so a restarted daemon never runs a job next to its own leftovers.
 *
 * A recorded process is found again by pid **and** start time (boot id and `/proc/<pid>/stat`
 * field 22), never by pid alone: a pid the kernel gave to another process since, or one from
 * before a reboot or on another host (a standby's ledger), is left alone. Besides, every live
 * process whose environment carries the `CRONIX_RUN_ID` of one of those runs is stopped: that
 * finds what outlived its group's leader, what left the group (`setsid`), and the process of
 * an attempt whose pid the crash kept from being recorded.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { effectiveCommand, effectiveService } from '../contract/manifest/effective.js';
import type { Manifest } from '../contract/manifest/types.js';
import { bootId, readStat, stopGroup, stopProcesses } from '../fire/process-group.js';
import { COMMAND_DEFAULTS } from '../contract/manifest/defaults.js';
import { COMMAND_ENV } from '../contract/run.js';
import type { RunProcess } from './store/types.js';

/** What was found of one recorded process: its group, or why none is ours. */
export type Leftover = { kind: 'group'; pgid: number } | { kind: 'none'; why: string };

/** Finds the recorded process's group if its leader is still that process (reads `/proc`). */
export function findLeftover(p: RunProcess): Leftover {
  if (p.startTime === null) return { kind: 'none', why: 'its start time was not recorded' };
  const colon = p.startTime.lastIndexOf(':');
  const boot = p.startTime.slice(0, colon);
  const ticks = p.startTime.slice(colon + 1);
  if (boot !== bootId()) return { kind: 'none', why: 'it ran before a reboot or on another host' };
  const leader = readStat(p.pid);
  if (leader !== null && leader.startTicks === ticks && leader.state !== 'Z')
    return { kind: 'group', pgid: p.pid };
  // the leader is gone, or its pid is another process now: what carries the run id is
  // found by `processesOfRuns`
  return { kind: 'none', why: 'it is gone' };
}

/** The value after `prefix` (`NAME=`) in a process's environment, or null. */
function environValue(pid: number, prefix: string): string | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return null;
  }
  const hit = text.split('\u0000').find((entry) => entry.startsWith(prefix));
  return hit === undefined ? null : hit.slice(prefix.length);
}

/** Live processes whose environment names one of `runIds` as `CRONIX_RUN_ID`, by run id. */
export function processesOfRuns(runIds: ReadonlySet<string>): Map<string, number[]> {
  const found = new Map<string, number[]>();
  if (runIds.size === 0) return found;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return found;
  }
  const prefix = `${COMMAND_ENV.runId}=`;
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    // one read per process, whatever the number of runs
    const id = environValue(pid, prefix);
    if (id === null || !runIds.has(id)) continue;
    const stat = readStat(pid);
    if (stat !== null && stat.state !== 'Z') found.set(id, [...(found.get(id) ?? []), pid]);
  }
  return found;
}

/** One stopped leftover, for the log. */
export interface StoppedLeftover {
  runId: string;
  app: string;
  job: string;
  pid: number;
  what: string;
}

/** A run the ledger shows `running`. */
export interface RunningRun {
  id: string;
  app: string;
  job: string;
}

/**
 * Stops the leftovers of `running` runs — their recorded processes (`processes`) and whatever
 * carries their run ids — each after its job's graceful stop (the default 10 s for a job no
 * longer in the manifests); resolves once all are gone.
 */
export async function stopLeftovers(
  running: readonly RunningRun[],
  processes: readonly RunProcess[],
  manifests: readonly Manifest[],
): Promise<StoppedLeftover[]> {
  const graceMs = (app: string, job: string): number => {
    const manifest = manifests.find((m) => m.app === app);
    // a service's start (SPEC §17) is stopped with the service's graceful stop
    const service = manifest?.services?.[job];
    if (service !== undefined) return effectiveService(service).graceful_stop_seconds * 1000;
    const command = manifest?.jobs.find((j) => j.name === job)?.command;
    const seconds =
      command === undefined
        ? COMMAND_DEFAULTS.graceful_stop_seconds
        : effectiveCommand(command).graceful_stop_seconds;
    return seconds * 1000;
  };
  const groups = new Map<string, number>();
  for (const p of processes) {
    const found = findLeftover(p);
    if (found.kind === 'group') groups.set(p.runId, found.pgid);
  }
  const carriers = processesOfRuns(new Set(running.map((r) => r.id)));
  const stopped = await Promise.all(
    running.map(async (r): Promise<StoppedLeftover | null> => {
      const pgid = groups.get(r.id);
      // outside the recorded group: escaped, orphaned, or of an attempt never recorded (one that
      // exited since the scan — a short-lived child of the group — is neither: nothing to stop)
      const others = (carriers.get(r.id) ?? []).filter((pid) => {
        const stat = readStat(pid);
        return stat !== null && stat.pgrp !== pgid;
      });
      const grace = graceMs(r.app, r.job);
      const parts: string[] = [];
      const work: Promise<unknown>[] = [];
      if (pgid !== undefined) {
        work.push(stopGroup(pgid, grace));
        parts.push(`process group ${pgid}`);
      }
      if (others.length > 0) {
        work.push(stopProcesses(others, grace));
        parts.push(`process(es) ${others.join(', ')}`);
      }
      if (work.length === 0) return null;
      await Promise.all(work);
      return {
        runId: r.id,
        app: r.app,
        job: r.job,
        pid: pgid ?? others[0]!,
        what: parts.join(' and '),
      };
    }),
  );
  return stopped.filter((s): s is StoppedLeftover => s !== null);
}
