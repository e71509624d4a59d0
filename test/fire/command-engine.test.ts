/**
 * The one per-fire engine running command jobs with the real runner (SPEC §11): each exit-code
 * class, retries and backoff, timeouts as retryable failures, the environment of every attempt,
 * the record-before-release hook, and a stop.
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import type { Job } from '../../src/contract/manifest/types.js';
import { systemClock } from '../../src/fire/clock.js';
import { inheritedEnv } from '../../src/fire/command-attempt.js';
import { createCommandRunner } from '../../src/fire/command-runner.js';
import { runFire, type FireEvent, type FireInput } from '../../src/fire/engine.js';
import { CapturedOutput } from '../../src/fire/output.js';
import type { Transport } from '../../src/fire/types.js';
import { script, scriptDir } from '../helpers/scripts.js';

/** HOME of the commands: also their working directory (no cwd given). */
const HOME = tmpdir();

const noHttp: Transport = {
  send: () => Promise.reject(new Error('a command job must not send HTTP')),
};

function commandJob(command: Record<string, unknown>, policy: Record<string, unknown> = {}): Job {
  const r = parseManifest({
    version: 1,
    app: 'ops',
    jobs: [
      {
        name: 'task',
        schedule: '@hourly',
        command,
        policy: { retries: { max_attempts: 3, min_seconds: 0, max_seconds: 1 }, ...policy },
      },
    ],
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.manifest.jobs[0] as Job;
}

function input(job: Job, extra: Partial<FireInput> = {}): FireInput {
  return {
    app: 'ops',
    job,
    runId: '01928f7e-0000-7000-8000-000000000001',
    runKey: 'ops/task#2026-01-01T00:00:00Z#0123456789abcdef',
    fireTimeMs: Date.UTC(2026, 0, 1),
    actualTimeMs: Date.UTC(2026, 0, 1) + 1500,
    secrets: [],
    previousSuccessMs: null,
    ...extra,
  };
}

async function fire(
  job: Job,
  extra: Partial<FireInput> = {},
  secretEnv = {},
  signal?: AbortSignal,
) {
  const events: FireEvent[] = [];
  const chunks: string[] = [];
  const records: string[] = [];
  const output = new CapturedOutput(
    { data: (_s, c) => chunks.push(c.toString()), attempt: (n) => chunks.push(`#${n}\n`) },
    { maxBytes: 1 << 20, secrets: Object.values(secretEnv) },
  );
  const result = await runFire(input(job, extra), {
    transport: noHttp,
    clock: systemClock,
    command: {
      runner: createCommandRunner(),
      hostEnv: inheritedEnv({ PATH: process.env['PATH'], HOME: HOME, SECRET: 'no' }),
      secretEnv,
      output,
    },
    onEvent: (e) => events.push(e),
    record: (e) => void records.push(e.outcome),
    ...(signal ? { signal } : {}),
  });
  output.end();
  return { result, events, output: chunks.join(''), records };
}

describe('engine: command jobs', () => {
  it('exit 0 is a success; the exit code is the status', async () => {
    const { result, records } = await fire(commandJob({ argv: ['/bin/true'] }));
    expect(result).toMatchObject({ outcome: 'success', attempts: 1, lastStatus: 0 });
    expect(records).toEqual(['success']);
  });

  it('a reject exit code is app-rejected at once, no retry', async () => {
    const { result, events } = await fire(
      commandJob({ argv: ['/bin/sh', '-c', 'exit 64'], reject_exit_codes: [64] }),
    );
    expect(result).toMatchObject({ outcome: 'app-rejected', attempts: 1, lastStatus: 64 });
    expect(events.at(-1)).toMatchObject({
      event: 'app-rejected',
      err: 'exit code 64 (a reject exit code: not retried)',
    });
  });

  it('any other exit code is retried, then retries-exhausted; a success code list is honoured', async () => {
    const { result, events, output } = await fire(
      commandJob({ argv: ['/bin/sh', '-c', 'echo try $CRONIX_ATTEMPT; exit 3'] }),
    );
    expect(result).toMatchObject({ outcome: 'retries-exhausted', attempts: 3, lastStatus: 3 });
    expect(events.filter((e) => e.event === 'attempt-failed').map((e) => e.err)).toEqual([
      'exit code 3',
      'exit code 3',
      'exit code 3',
    ]);
    expect(output).toBe('#1\ntry 1\n#2\ntry 2\n#3\ntry 3\n');
    const ok = await fire(
      commandJob({ argv: ['/bin/sh', '-c', 'exit 3'], success_exit_codes: [0, 3] }),
    );
    expect(ok.result.outcome).toBe('success');
  });

  it('a failure then a success: the second attempt wins', async () => {
    const dir = scriptDir();
    const flaky = script(dir, 'flaky.sh', `[ "$CRONIX_ATTEMPT" = 2 ] && exit 0; exit 1`);
    const { result } = await fire(commandJob({ argv: [flaky] }));
    expect(result).toMatchObject({ outcome: 'success', attempts: 2, lastStatus: 0 });
  });

  it('death by a signal and a program that cannot start are retried', async () => {
    const killed = await fire(
      commandJob(
        { argv: ['/bin/sh', '-c', 'kill -KILL $$'] },
        { retries: { max_attempts: 2, min_seconds: 0 } },
      ),
    );
    expect(killed.result).toMatchObject({ outcome: 'retries-exhausted', attempts: 2 });
    expect(killed.events.find((e) => e.event === 'attempt-failed')?.err).toBe(
      'killed by signal SIGKILL',
    );
    const missing = await fire(
      commandJob({ argv: ['/no/such/prog'] }, { retries: { max_attempts: 2, min_seconds: 0 } }),
    );
    expect(missing.result).toMatchObject({ outcome: 'retries-exhausted', attempts: 2 });
  });

  it('a timeout stops the group and is retried', async () => {
    const { result, events } = await fire(
      commandJob(
        { argv: ['/bin/sleep', '30'], graceful_stop_seconds: 0 },
        { timeout_seconds: 1, retries: { max_attempts: 2, min_seconds: 0 } },
      ),
    );
    expect(result).toMatchObject({ outcome: 'retries-exhausted', attempts: 2 });
    expect(events.filter((e) => e.event === 'attempt-failed').map((e) => e.err)).toEqual([
      'timeout after 1s; the process group was stopped',
      'timeout after 1s; the process group was stopped',
    ]);
  });

  it('sets exactly PATH HOME LANG TZ, env, env_from_secrets and the CRONIX_* that apply', async () => {
    const job = commandJob({ argv: ['/usr/bin/env'], env: { MODE: 'full', LANG: 'C.UTF-8' } });
    const { output } = await fire(
      job,
      { previousSuccessMs: Date.UTC(2025, 11, 31, 23), leaderEpoch: 7 },
      { DB_PASSWORD: 'pw-0123456789' },
    );
    const vars = output.split('\n').filter((l) => l.includes('='));
    expect(vars.sort()).toEqual(
      [
        `PATH=${process.env['PATH']}`,
        `HOME=${HOME}`,
        'LANG=C.UTF-8',
        'MODE=full',
        'DB_PASSWORD=[REDACTED]',
        'CRONIX_RUN_ID=01928f7e-0000-7000-8000-000000000001',
        'CRONIX_RUN_KEY=ops/task#2026-01-01T00:00:00Z#0123456789abcdef',
        `CRONIX_FIRE_TIME=${Date.UTC(2026, 0, 1) / 1000}`,
        'CRONIX_ATTEMPT=1',
        `CRONIX_PREVIOUS_SUCCESS_TIME=${Date.UTC(2025, 11, 31, 23) / 1000}`,
        'CRONIX_LEADER_EPOCH=7',
      ].sort(),
    );
    // absent: no previous success, no fencing token, no leader epoch, nothing of this process
    const bare = await fire(job);
    expect(bare.output).not.toMatch(/CRONIX_(PREVIOUS_SUCCESS_TIME|FENCING_TOKEN|LEADER_EPOCH)=/);
    expect(bare.output).not.toContain('SECRET=no');
    expect(bare.output).not.toContain('VITEST');
  });

  it('a stop ends the fire stopped, with the group gone', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const { result } = await fire(
      commandJob({ argv: ['/bin/sleep', '30'], graceful_stop_seconds: 1 }),
      {},
      {},
      controller.signal,
    );
    expect(result.outcome).toBe('stopped');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('without a command runner a command job is an internal error, nothing sent', async () => {
    const result = await runFire(input(commandJob({ argv: ['/bin/true'] })), {
      transport: noHttp,
      clock: systemClock,
    });
    expect(result).toMatchObject({ outcome: 'internal-error', attempts: 0 });
  });
});
