/**
 * Leftover processes after a crash (SPEC §11): a recorded group is stopped when its leader is
 * still the recorded process (pid AND start time); a pid whose start time differs (the kernel
 * gave it to another process), or from another boot, is never signalled; and any process
 * carrying the CRONIX_RUN_ID of a run left running — orphaned, escaped with setsid, or of an
 * attempt whose pid was never recorded — is stopped, and no other.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findLeftover, processesOfRuns, stopLeftovers } from '../../src/daemon/leftovers.js';
import { bootId, processStartTime } from '../../src/fire/process-group.js';
import { alive, readPid, scriptDir } from '../helpers/scripts.js';

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

/** Starts `argv` as the leader of its own group with `env`; returns its pid. */
function startGroup(argv: string[], env: Record<string, string> = {}): number {
  const child = spawn(argv[0]!, argv.slice(1), {
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
  });
  child.unref();
  started.push(child.pid!);
  return child.pid!;
}

const run = (id: string) => ({ id, app: 'a', job: 'j' });
const proc = (runId: string, pid: number, startTime: string | null) => ({
  runId,
  app: 'a',
  job: 'j',
  pid,
  startTime,
});

async function waitGone(pid: number): Promise<void> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('leftovers', () => {
  it('a recorded group whose leader is alive with the same start time is stopped', async () => {
    const pid = startGroup(['/bin/sleep', '300']);
    const p = proc('r1', pid, processStartTime(pid));
    expect(findLeftover(p)).toEqual({ kind: 'group', pgid: pid });
    expect(await stopLeftovers([run('r1')], [p], [])).toEqual([
      { runId: 'r1', app: 'a', job: 'j', pid, what: `process group ${pid}` },
    ]);
    expect(alive(pid)).toBe(false);
  });

  it('a pid with another start time (reused), another boot, or none recorded is never signalled', async () => {
    const pid = startGroup(['/bin/sleep', '300']);
    const real = processStartTime(pid) as string;
    const ticks = Number(real.slice(real.lastIndexOf(':') + 1));
    const cases = [
      proc('r2', pid, `${bootId()}:${ticks - 1}`),
      proc('r3', pid, `00000000-0000-0000-0000-000000000000:${ticks}`),
      proc('r4', pid, null),
    ];
    expect(cases.map((c) => findLeftover(c).kind)).toEqual(['none', 'none', 'none']);
    expect(await stopLeftovers([run('r2'), run('r3'), run('r4')], cases, [])).toEqual([]);
    expect(alive(pid)).toBe(true);
  });

  it('leader gone: processes carrying the run id are stopped, those of other runs are not', async () => {
    const dir = scriptDir();
    const sh = (runId: string, name: string): number =>
      startGroup(['/bin/sh', '-c', `sleep 300 & echo $! > ${dir}/${name}; exit 0`], {
        CRONIX_RUN_ID: runId,
      });
    const leaderA = sh('run-a', 'a.pid');
    const orphanA = await readPid(join(dir, 'a.pid'));
    const leaderB = sh('run-b', 'b.pid');
    const orphanB = await readPid(join(dir, 'b.pid'));
    started.push(orphanA, orphanB);
    await waitGone(leaderA);
    await waitGone(leaderB);
    const a = proc('run-a', leaderA, `${bootId()}:1`); // its leader has exited since
    expect(findLeftover(a).kind).toBe('none');
    expect(processesOfRuns(new Set(['run-a', 'run-x']))).toEqual(new Map([['run-a', [orphanA]]]));
    const stopped = await stopLeftovers([run('run-a')], [a], []);
    expect(stopped.map((s) => s.what)).toEqual([`process(es) ${orphanA}`]);
    expect(alive(orphanA)).toBe(false);
    expect(alive(orphanB)).toBe(true);
  });

  it('a process of a run whose pid was never recorded (or that left its group) is found by its run id', async () => {
    const escaped = startGroup(['/bin/sleep', '300'], { CRONIX_RUN_ID: 'run-c' });
    const stopped = await stopLeftovers([run('run-c')], [], []);
    expect(stopped).toEqual([
      { runId: 'run-c', app: 'a', job: 'j', pid: escaped, what: `process(es) ${escaped}` },
    ]);
    expect(alive(escaped)).toBe(false);
  });
});
