/**
 * `cronix trigger` running command jobs as real processes (SPEC §11): each exit-code class and
 * its exit code, retries, a timeout against a script that traps SIGTERM with a grandchild that
 * ignores it, Replace and SIGTERM stopping the group, the environment, 3 MB of output against
 * a 100 KB cap, argv never given to a shell, env_from_secrets (resolved, redacted, refused).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dirArgs,
  events,
  normalizedJob,
  runShim,
  shimDirs,
  startShim,
  writeSpec,
  type ShimDirs,
  type ShimRun,
} from '../helpers/shim.js';
import { alive, readPid, script, scriptDir, stubbornScript } from '../helpers/scripts.js';
import { SHARED_REDIS_URL } from '../helpers/common.js';

let n = 0;

/** Writes the spec of a command job; returns its target. */
function job(dirs: ShimDirs, command: Record<string, unknown>, policy: object = {}): string {
  const name = `cmd-${++n}`;
  writeSpec(
    dirs.specDir,
    'ops',
    normalizedJob('ops', {
      name,
      schedule: '* * * * *',
      command,
      policy: {
        timeout_seconds: 30,
        retries: { max_attempts: 1, min_seconds: 0, max_seconds: 1 },
        ...policy,
      },
    }),
    { secret_refs: [] },
  );
  return `ops.${name}`;
}

const output = (run: ShimRun, stream = 'stdout'): string[] =>
  run.lines
    .filter((l) => l['event'] === 'output' && l['stream'] === stream)
    .map((l) => String(l['msg']));
const terminal = (run: ShimRun): Record<string, unknown> | undefined => run.lines.at(-1);

/**
 * The run id of a started shim, from its first log line. Reads the output the helper collected
 * from spawn on: a listener attached here would miss lines written before this call.
 */
async function runIdOf(shim: ReturnType<typeof startShim>): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const m = /"run_id":"([0-9a-f-]{36})"/.exec(shim.stdout());
    if (m) return m[1] as string;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no run id in ${shim.stdout().slice(0, 2000)}`);
}

describe('cronix trigger: command jobs', () => {
  it('exit 0 → success, exit 0; output lines carry stream and attempt', async () => {
    const dirs = shimDirs();
    const run = await runShim(
      job(dirs, { argv: ['/bin/sh', '-c', 'echo hello; echo oops >&2'] }),
      dirArgs(dirs),
    );
    expect(run.code).toBe(0);
    expect(events(run)).toEqual([
      'fire-start',
      'attempt',
      'command-started',
      'output',
      'output',
      'success',
    ]);
    expect(output(run)).toEqual(['hello']);
    expect(output(run, 'stderr')).toEqual(['oops']);
    expect(run.lines.find((l) => l['event'] === 'output')).toMatchObject({
      attempt: 1,
      app: 'ops',
      run_key: expect.stringMatching(/^ops\/cmd-\d+#/),
    });
    expect(terminal(run)).toMatchObject({ event: 'success', status: 0 });
  });

  it('a reject exit code → app-rejected, exit 1, one attempt', async () => {
    const dirs = shimDirs();
    const run = await runShim(
      job(
        dirs,
        { argv: ['/bin/sh', '-c', 'exit 64'], reject_exit_codes: [64] },
        { retries: { max_attempts: 3, min_seconds: 0 } },
      ),
      dirArgs(dirs),
    );
    expect(run.code).toBe(1);
    expect(run.lines.filter((l) => l['event'] === 'attempt')).toHaveLength(1);
    expect(terminal(run)).toMatchObject({ event: 'app-rejected', status: 64 });
  });

  it('another exit code or a signal → retried with backoff, then exit 2; CRONIX_ATTEMPT counts', async () => {
    const dirs = shimDirs();
    const started = Date.now();
    const run = await runShim(
      job(
        dirs,
        {
          argv: [
            '/bin/sh',
            '-c',
            'echo attempt $CRONIX_ATTEMPT; [ $CRONIX_ATTEMPT = 2 ] && kill -KILL $$; exit 5',
          ],
        },
        { retries: { max_attempts: 3, min_seconds: 1, max_seconds: 1 } },
      ),
      dirArgs(dirs),
    );
    expect(run.code).toBe(2);
    expect(output(run)).toEqual(['attempt 1', 'attempt 2', 'attempt 3']);
    expect(run.lines.filter((l) => l['event'] === 'attempt-failed').map((l) => l['err'])).toEqual([
      'exit code 5',
      'killed by signal SIGKILL',
      'exit code 5',
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000); // two 1 s backoffs
    expect(terminal(run)).toMatchObject({ event: 'retries-exhausted', attempt: 3 });
  });

  it('a retry that succeeds ends the fire with exit 0', async () => {
    const dirs = shimDirs();
    const dir = scriptDir();
    const flaky = script(dir, 'flaky.sh', '[ "$CRONIX_ATTEMPT" = 2 ]');
    const run = await runShim(
      job(dirs, { argv: [flaky] }, { retries: { max_attempts: 3, min_seconds: 0 } }),
      dirArgs(dirs),
    );
    expect(run.code).toBe(0);
    expect(terminal(run)).toMatchObject({ event: 'success', attempt: 2 });
  });

  it('timeout: SIGTERM to the group, SIGKILL after the grace — the trapping script and its SIGTERM-proof grandchild are gone', async () => {
    const dirs = shimDirs();
    const dir = scriptDir();
    const started = Date.now();
    const run = await runShim(
      job(dirs, { argv: [stubbornScript(dir)], graceful_stop_seconds: 2 }, { timeout_seconds: 1 }),
      dirArgs(dirs),
    );
    const took = Date.now() - started;
    expect(run.code).toBe(2);
    expect(output(run)).toContain('leader got TERM');
    expect(terminal(run)).toMatchObject({ event: 'retries-exhausted' });
    expect(run.lines.find((l) => l['event'] === 'attempt-failed')?.['err']).toBe(
      'timeout after 1s; the process group was stopped',
    );
    expect(alive(await readPid(join(dir, 'leader.pid')))).toBe(false);
    expect(alive(await readPid(join(dir, 'grandchild.pid')))).toBe(false);
    expect(took).toBeGreaterThanOrEqual(3_000); // timeout 1 s + grace 2 s
    expect(took).toBeLessThan(10_000);
  });

  it('SIGTERM to the shim stops the whole group, then exit 75', async () => {
    const dirs = shimDirs();
    const dir = scriptDir();
    const shim = startShim(
      job(dirs, { argv: [stubbornScript(dir)], graceful_stop_seconds: 1 }),
      dirArgs(dirs),
    );
    const grandchild = await readPid(join(dir, 'grandchild.pid'));
    const leader = await readPid(join(dir, 'leader.pid'));
    shim.child.kill('SIGTERM');
    const run = await shim.done;
    expect(run.code).toBe(75);
    expect(terminal(run)).toMatchObject({ event: 'stopped' });
    expect(alive(leader)).toBe(false);
    expect(alive(grandchild)).toBe(false);
  });

  it('Replace: the new fire stops the running one and its whole group, then runs', async () => {
    const dirs = shimDirs();
    const base = scriptDir();
    const stubborn = stubbornScript(base);
    // each fire writes its pids under <base>/<run id>
    const target = job(
      dirs,
      {
        argv: ['/bin/sh', '-c', `d=${base}/$CRONIX_RUN_ID; mkdir -p $d; exec ${stubborn} $d`],
        graceful_stop_seconds: 1,
      },
      { concurrency: 'Replace', timeout_seconds: 30 },
    );
    const old = startShim(target, dirArgs(dirs));
    const oldId = await runIdOf(old);
    const leader = await readPid(join(base, oldId, 'leader.pid'));
    const grandchild = await readPid(join(base, oldId, 'grandchild.pid'));
    const replacing = startShim(target, dirArgs(dirs));
    const oldRun = await old.done;
    expect(oldRun.code).toBe(75);
    expect(terminal(oldRun)).toMatchObject({ event: 'stopped' });
    expect(alive(leader)).toBe(false);
    expect(alive(grandchild)).toBe(false);
    // the replacement runs its own command once the old group is gone
    const newId = await runIdOf(replacing);
    await readPid(join(base, newId, 'grandchild.pid'));
    replacing.child.kill('SIGTERM');
    const newRun = await replacing.done;
    expect(events(newRun)).toEqual(expect.arrayContaining(['replaced-holder', 'command-started']));
    expect(newRun.code).toBe(75);
  });

  it('the environment: PATH HOME LANG TZ, env, env_from_secrets, CRONIX_*; nothing else of the shim', async () => {
    const dirs = shimDirs();
    const target = job(dirs, {
      argv: ['/usr/bin/env'],
      env: { MODE: 'nightly' },
      env_from_secrets: { DB_PASSWORD: 'env:DB_PW' },
    });
    const shimEnv = {
      DB_PW: 'pw-from-the-env-0001',
      HOME: '/',
      LANG: 'C',
      TZ: 'Europe/Paris',
      LEAK: 'no',
    };
    const run = await runShim(
      target,
      [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z'],
      shimEnv,
    );
    expect(run.code).toBe(0);
    const names = output(run).map((l) => l.slice(0, l.indexOf('=')));
    expect(names.sort()).toEqual(
      [
        'PATH',
        'HOME',
        'LANG',
        'TZ',
        'MODE',
        'DB_PASSWORD',
        'CRONIX_RUN_ID',
        'CRONIX_RUN_KEY',
        'CRONIX_FIRE_TIME',
        'CRONIX_ATTEMPT',
      ].sort(),
    );
    expect(output(run)).toContain('TZ=Europe/Paris');
    expect(output(run)).toContain('DB_PASSWORD=[REDACTED]');
    expect(output(run)).toContain(`CRONIX_FIRE_TIME=${Date.UTC(2026, 0, 1) / 1000}`);
    expect(run.stdout).not.toContain('pw-from-the-env-0001');
    // after a success, the next fire sees CRONIX_PREVIOUS_SUCCESS_TIME; host scope has no token
    const again = await runShim(
      target,
      [...dirArgs(dirs), '--fire-time', '2026-01-01T00:01:00Z'],
      shimEnv,
    );
    expect(output(again).some((l) => l.startsWith('CRONIX_PREVIOUS_SUCCESS_TIME='))).toBe(true);
    expect(output(again).some((l) => l.startsWith('CRONIX_FENCING_TOKEN='))).toBe(false);
  });

  it('global scope: the command sees CRONIX_FENCING_TOKEN of its Redis lock', async () => {
    const dirs = shimDirs();
    const target = job(
      dirs,
      { argv: ['/bin/sh', '-c', 'echo "token=$CRONIX_FENCING_TOKEN"'] },
      { concurrency_scope: 'global' },
    );
    const prefix = `cronix-cmd-test-${process.pid}-${Date.now()}:`;
    const run = await runShim(target, [...dirArgs(dirs), '--lock-backend', SHARED_REDIS_URL], {
      CRONIX_REDIS_PREFIX: prefix,
    });
    expect(run.code).toBe(0);
    const token = run.lines.find((l) => l['event'] === 'attempt')?.['fencing_token'];
    expect(typeof token).toBe('number');
    expect(output(run)).toEqual([`token=${String(token)}`]);
    const { Redis } = await import('ioredis');
    const redis = new Redis(SHARED_REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('a run key that already succeeded does not run the command again', async () => {
    const dirs = shimDirs();
    const dir = scriptDir();
    const target = job(dirs, { argv: ['/bin/sh', '-c', `echo x >> ${dir}/ran`] });
    const args = [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z'];
    expect((await runShim(target, args)).code).toBe(0);
    const second = await runShim(target, args);
    expect(second.code).toBe(0);
    expect(terminal(second)).toMatchObject({ event: 'duplicate-suppressed' });
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(`${dir}/ran`, 'utf8')).toBe('x\n');
  });

  it('3 MB of output against a 100 KB cap: 100 KB kept as lines, then output-truncated', async () => {
    const dirs = shimDirs();
    const run = await runShim(
      job(dirs, {
        argv: [
          '/bin/sh',
          '-c',
          'i=0; while [ $i -lt 3072 ]; do printf "%01023d\\n" $i; i=$((i+1)); done',
        ],
        max_output_bytes: 100 * 1024,
      }),
      dirArgs(dirs),
    );
    expect(run.code).toBe(0);
    const lines = output(run);
    expect(lines).toHaveLength(100);
    expect(lines.every((l) => l.length === 1023)).toBe(true);
    const truncated = run.lines.filter((l) => l['event'] === 'output-truncated');
    expect(truncated).toHaveLength(1);
    expect(truncated[0]).toMatchObject({ level: 'warn', max_output_bytes: 102400 });
  });

  it('argv never goes through a shell', async () => {
    const dirs = shimDirs();
    const dir = scriptDir();
    const hostile = `; touch ${dir}/pwned $(touch ${dir}/pwned) \`id\` $HOME * && |`;
    const run = await runShim(job(dirs, { argv: ['/bin/echo', hostile] }), dirArgs(dirs));
    expect(run.code).toBe(0);
    expect(output(run)).toEqual([hostile]);
    await expect(import('node:fs').then((fs) => fs.statSync(`${dir}/pwned`))).rejects.toThrow();
  });

  it('an env_from_secrets ref that does not resolve: exit 3 naming the variable and the ref, nothing run', async () => {
    const dirs = shimDirs();
    const dir = scriptDir();
    const run = await runShim(
      job(dirs, {
        argv: ['/bin/sh', '-c', `touch ${dir}/ran`],
        env_from_secrets: { TOKEN: 'file:/nonexistent/token', PW: 'raw:' },
      }),
      dirArgs(dirs),
    );
    expect(run.code).toBe(3);
    expect(terminal(run)?.['err']).toBe(
      'command.env_from_secrets PW: secret ref raw:[REDACTED]: raw ref is empty; command.env_from_secrets TOKEN: secret ref file:/nonexistent/token: file not readable: ENOENT',
    );
    await expect(import('node:fs').then((fs) => fs.statSync(`${dir}/ran`))).rejects.toThrow();
  });

  it('needs no signing secret (no CRON_SECRET), and a program that is missing is retried then exit 2', async () => {
    const dirs = shimDirs();
    const run = await runShim(job(dirs, { argv: ['/no/such/program'] }), dirArgs(dirs), {
      CRON_SECRET: undefined,
    });
    expect(run.code).toBe(2);
    expect(run.lines.find((l) => l['event'] === 'attempt-failed')?.['err']).toBe(
      'cannot run "/no/such/program": no such file',
    );
  });
});
