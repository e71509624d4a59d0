/**
 * The command runner on real processes (SPEC §11): no shell, exactly the given environment,
 * exit codes and signals, and process groups stopped whole — at the deadline, on abort, and
 * when the leader leaves something behind.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommandRunner } from '../../src/fire/command-runner.js';
import { processStartTime, readStat } from '../../src/fire/process-group.js';
import type { CommandRequest, OutputStream, SpawnedProcess } from '../../src/fire/types.js';
import { alive, readPid, script, scriptDir, stubbornScript } from '../helpers/scripts.js';

const runner = createCommandRunner();
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';

function request(argv: string[], extra: Partial<CommandRequest> = {}): CommandRequest {
  return { argv, env: { PATH }, cwd: '/', gracefulStopMs: 1_000, ...extra };
}

/** Runs and collects the output per stream. */
async function run(
  req: CommandRequest,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<{
  result: Awaited<ReturnType<typeof runner.run>>;
  out: Record<OutputStream, string>;
  spawned: SpawnedProcess[];
}> {
  const out: Record<OutputStream, string> = { stdout: '', stderr: '' };
  const spawned: SpawnedProcess[] = [];
  const result = await runner.run(req, {
    timeoutMs: opts.timeoutMs ?? 10_000,
    ...(opts.signal ? { signal: opts.signal } : {}),
    output: { attempt: () => undefined, write: (s, c) => (out[s] += c.toString()) },
    onSpawn: (p) => spawned.push(p),
  });
  return { result, out, spawned };
}

describe('command runner', () => {
  it('reports the exit code, and stdout and stderr apart', async () => {
    const { result, out } = await run(request(['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']));
    expect(result).toEqual({ kind: 'exit', code: 3, signal: null });
    expect(out).toEqual({ stdout: 'out\n', stderr: 'err\n' });
  });

  it('reports death by a signal', async () => {
    const { result } = await run(request(['/bin/sh', '-c', 'kill -SEGV $$']));
    expect(result).toEqual({ kind: 'exit', code: null, signal: 'SIGSEGV' });
  });

  it('never passes argv to a shell', async () => {
    const dir = scriptDir();
    const marker = join(dir, 'pwned');
    const hostile = `$HOME; touch ${marker} \`touch ${marker}\` $(touch ${marker}) * | cat && "q" 'q'`;
    const { result, out } = await run(request(['/bin/echo', hostile, '*']));
    expect(result).toEqual({ kind: 'exit', code: 0, signal: null });
    expect(out.stdout).toBe(`${hostile} *\n`);
    expect(() => readFileSync(marker)).toThrow();
  });

  it('gives the process exactly the environment it was given', async () => {
    const { out } = await run(
      request(['/usr/bin/env'], { env: { PATH, ONLY_THIS: 'x y', EMPTY: '' } }),
    );
    expect(out.stdout.split('\n').filter(Boolean).sort()).toEqual(
      ['EMPTY=', 'ONLY_THIS=x y', `PATH=${PATH}`].sort(),
    );
  });

  it('runs in the working directory, looks argv[0] up in PATH, explains what cannot start', async () => {
    const dir = scriptDir();
    expect((await run(request(['pwd'], { cwd: dir }))).out.stdout).toBe(`${dir}\n`);
    expect((await run(request(['no-such-program-xyz']))).result).toEqual({
      kind: 'spawn-error',
      message: `cannot run "no-such-program-xyz": not found in PATH (${PATH})`,
    });
    expect((await run(request(['/nonexistent/prog']))).result).toEqual({
      kind: 'spawn-error',
      message: 'cannot run "/nonexistent/prog": no such file',
    });
    expect((await run(request(['/bin/true'], { cwd: join(dir, 'gone') }))).result).toEqual({
      kind: 'spawn-error',
      message: `working directory ${JSON.stringify(join(dir, 'gone'))} does not exist`,
    });
    const notExec = join(dir, 'plain');
    script(dir, 'plain', 'exit 0');
    await import('node:fs').then((fs) => fs.chmodSync(notExec, 0o644));
    expect((await run(request([notExec]))).result).toMatchObject({
      kind: 'spawn-error',
      message: expect.stringContaining('permission denied'),
    });
  });

  it('tells the pid and its start time, the leader of its own process group', async () => {
    const { spawned, out } = await run(request(['/bin/sh', '-c', 'echo $$; cat /proc/$$/stat']));
    expect(spawned).toHaveLength(1);
    const pid = spawned[0]!.pid;
    expect(out.stdout.split('\n')[0]).toBe(String(pid));
    const stat = out.stdout.split('\n')[1]!;
    // field 5 (pgrp) is the pid itself: a group of its own
    expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]).toBe(String(pid));
    expect(spawned[0]!.startTime).toMatch(/^[0-9a-f-]{36}:\d+$/);
    expect(spawned[0]!.startTime?.split(':')[1]).toBe(
      stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19],
    );
  });

  it('at the deadline: SIGTERM to the group, SIGKILL after the grace; both stubborn processes are gone', async () => {
    const dir = scriptDir();
    const started = Date.now();
    const { result, out } = await run(request([stubbornScript(dir)], { gracefulStopMs: 1_500 }), {
      timeoutMs: 1_000,
    });
    const took = Date.now() - started;
    expect(result).toEqual({ kind: 'timeout' });
    const leader = await readPid(join(dir, 'leader.pid'));
    const grandchild = await readPid(join(dir, 'grandchild.pid'));
    expect(out.stdout).toContain('leader got TERM'); // SIGTERM came first, and was trapped
    expect(alive(leader)).toBe(false);
    expect(alive(grandchild)).toBe(false);
    // not before deadline + grace (SIGKILL was needed), not much after
    expect(took).toBeGreaterThanOrEqual(2_400);
    expect(took).toBeLessThan(6_000);
  });

  it('on abort: stops the group the same way', async () => {
    const dir = scriptDir();
    const controller = new AbortController();
    const pending = run(request([stubbornScript(dir)], { gracefulStopMs: 500 }), {
      signal: controller.signal,
    });
    const grandchild = await readPid(join(dir, 'grandchild.pid'));
    controller.abort();
    const { result } = await pending;
    expect(result).toEqual({ kind: 'aborted' });
    expect(alive(await readPid(join(dir, 'leader.pid')))).toBe(false);
    expect(alive(grandchild)).toBe(false);
  });

  it('a process left behind by a leader that exited is stopped before the attempt ends', async () => {
    const dir = scriptDir();
    const { result } = await run(
      request(['/bin/sh', '-c', `sleep 300 & echo $! > ${dir}/bg.pid; exit 0`], {
        gracefulStopMs: 500,
      }),
    );
    expect(result).toEqual({ kind: 'exit', code: 0, signal: null });
    expect(alive(await readPid(join(dir, 'bg.pid')))).toBe(false);
  });

  it('an attempt aborted before it starts runs nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const { result, spawned } = await run(request(['/bin/true']), { signal: controller.signal });
    expect(result).toEqual({ kind: 'aborted' });
    expect(spawned).toEqual([]);
  });

  it('process identity: start time of this process is stable, of a dead pid null', () => {
    expect(processStartTime(process.pid)).toBe(processStartTime(process.pid));
    expect(readStat(process.pid)?.pid).toBe(process.pid);
    expect(processStartTime(2 ** 22 + 7)).toBeNull();
  });
});
