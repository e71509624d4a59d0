/**
 * Command jobs in the daemon (SPEC §11) with real processes and a real ledger: each exit-code
 * class in the ledger (status = exit code, attempt log, error), retries, a timeout against a
 * trapping script with a SIGTERM-proof grandchild, Replace and cancel stopping the group before
 * anything else starts, 3 MB against a 100 KB cap, argv without a shell, secrets redacted,
 * the log API (plain and follow), and retention deleting logs with their runs.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/http/api.js';
import { systemClock } from '../../src/fire/clock.js';
import type { RunRecord } from '../../src/daemon/store/types.js';
import {
  dropLedgers,
  freshLedger,
  LEDGERS,
  manifest,
  startTestDaemon,
  type LedgerKind,
  type TestDaemon,
} from '../helpers/daemon.js';
import { until } from '../helpers/common.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { newRun } from './store-fixtures.js';
import { alive, readPid, script, scriptDir, stubbornScript } from '../helpers/scripts.js';

let daemon: TestDaemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

let kind: LedgerKind = 'sqlite';

/** A daemon with one command job `ops/task`, on a fresh ledger of this pass's kind. */
async function start(
  command: Record<string, unknown>,
  policy: Record<string, unknown> = {},
  envSecrets: Record<string, string> = {},
): Promise<TestDaemon> {
  const m = manifest('ops', [
    {
      name: 'task',
      schedule: '0 0 1 1 *',
      command,
      policy: { retries: { max_attempts: 1, min_seconds: 0, max_seconds: 1 }, ...policy },
    },
  ]);
  daemon = await startTestDaemon(systemClock, [m], freshLedger(kind), undefined, {
    'ops/task': envSecrets,
  });
  return daemon;
}

/** Triggers `ops/task` and waits for that run's end. */
async function runOnce(d: TestDaemon): Promise<RunRecord> {
  const before = d.ended.length;
  const { run } = await d.scheduler.trigger('ops', 'task');
  await d.waitEnded(before + 1, 30_000);
  return (await d.store.getRun(run.id)) as RunRecord;
}

const logOf = (d: TestDaemon, run: RunRecord): string =>
  readFileSync(d.logs.path(run.id) as string, 'utf8');

describe.each(LEDGERS)('daemon: command jobs on a %s ledger', (ledger) => {
  beforeAll(() => {
    kind = ledger;
  });
  afterAll(dropLedgers);

  it('exit 0: success, status 0, output in <data-dir>/logs/<run id>.log (mode 0600)', async () => {
    const d = await start({ argv: ['/bin/sh', '-c', 'echo out; echo err >&2'] });
    const run = await runOnce(d);
    expect(run).toMatchObject({ outcome: 'success', attempts: 1, lastStatus: 0, error: null });
    expect(run.attemptLog).toEqual([expect.objectContaining({ status: 0, error: null })]);
    expect(logOf(d, run)).toBe('out\nerr\n');
    expect(statSync(d.logs.path(run.id) as string).mode & 0o777).toBe(0o600);
    expect(run.outputTruncated).toBe(false);
  });

  it('a reject exit code: app_rejected, one attempt', async () => {
    const d = await start(
      { argv: ['/bin/sh', '-c', 'exit 64'], reject_exit_codes: [64] },
      { retries: { max_attempts: 3, min_seconds: 0 } },
    );
    const run = await runOnce(d);
    expect(run).toMatchObject({
      outcome: 'app_rejected',
      attempts: 1,
      lastStatus: 64,
      error: 'exit code 64 (a reject exit code: not retried)',
    });
  });

  it('other exit codes and signals are retried, each attempt in the log and the output', async () => {
    const d = await start(
      {
        argv: [
          '/bin/sh',
          '-c',
          'echo try $CRONIX_ATTEMPT; [ $CRONIX_ATTEMPT = 2 ] && kill -KILL $$; exit 3',
        ],
      },
      { retries: { max_attempts: 3, min_seconds: 0 } },
    );
    const run = await runOnce(d);
    expect(run).toMatchObject({ outcome: 'retries_exhausted', attempts: 3, lastStatus: 3 });
    expect(run.attemptLog.map((a) => [a.attempt, a.status, a.error])).toEqual([
      [1, 3, 'exit code 3'],
      [2, null, 'killed by signal SIGKILL'],
      [3, 3, 'exit code 3'],
    ]);
    expect(logOf(d, run)).toBe(
      'try 1\n--- cronix: attempt 2 ---\ntry 2\n--- cronix: attempt 3 ---\ntry 3\n',
    );
  });

  it('a retry that succeeds ends the run success', async () => {
    const flaky = script(scriptDir(), 'flaky.sh', '[ "$CRONIX_ATTEMPT" = 2 ]');
    const d = await start({ argv: [flaky] }, { retries: { max_attempts: 3, min_seconds: 0 } });
    expect(await runOnce(d)).toMatchObject({ outcome: 'success', attempts: 2, lastStatus: 0 });
  });

  it('timeout: the trapping script and its SIGTERM-proof grandchild are gone when the run ends', async () => {
    const dir = scriptDir();
    const d = await start(
      { argv: [stubbornScript(dir)], graceful_stop_seconds: 1 },
      { timeout_seconds: 1 },
    );
    const started = Date.now();
    const run = await runOnce(d);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(run).toMatchObject({
      outcome: 'retries_exhausted',
      error: 'timeout after 1s; the process group was stopped',
    });
    expect(logOf(d, run)).toContain('leader got TERM');
    expect(alive(await readPid(join(dir, 'leader.pid')))).toBe(false);
    expect(alive(await readPid(join(dir, 'grandchild.pid')))).toBe(false);
  });

  it('Replace: the old run and its whole group are gone before the new one starts', async () => {
    const base = scriptDir();
    const stubborn = stubbornScript(base);
    const d = await start(
      {
        argv: ['/bin/sh', '-c', `d=${base}/$CRONIX_RUN_ID; mkdir -p $d; exec ${stubborn} $d`],
        graceful_stop_seconds: 1,
      },
      { concurrency: 'Replace', timeout_seconds: 60 },
    );
    const { run: first } = await d.scheduler.trigger('ops', 'task');
    const leader = await readPid(join(base, first.id, 'leader.pid'));
    const grandchild = await readPid(join(base, first.id, 'grandchild.pid'));
    const seenAtSecondStart: boolean[] = [];
    // the moment the second run's attempts are about to start
    d.scheduler.events.on('run-launched', (r) => {
      if (r.id !== first.id) seenAtSecondStart.push(alive(leader), alive(grandchild));
    });
    const { run: second } = await d.scheduler.trigger('ops', 'task');
    await d.waitEnded(1, 15_000);
    expect(await d.store.getRun(first.id)).toMatchObject({
      outcome: 'stopped',
      error: `replaced by run ${second.id}`,
    });
    await readPid(join(base, second.id, 'leader.pid'));
    expect(seenAtSecondStart).toEqual([false, false]);
    await d.scheduler.cancel(second.id);
  });

  it('cancel: the run ends stopped once its whole group is gone', async () => {
    const dir = scriptDir();
    const d = await start({ argv: [stubbornScript(dir)], graceful_stop_seconds: 1 });
    const { run } = await d.scheduler.trigger('ops', 'task');
    const leader = await readPid(join(dir, 'leader.pid'));
    const grandchild = await readPid(join(dir, 'grandchild.pid'));
    const cancelled = await d.scheduler.cancel(run.id);
    expect(cancelled).toMatchObject({ outcome: 'stopped', error: 'cancelled' });
    expect(alive(leader)).toBe(false);
    expect(alive(grandchild)).toBe(false);
    expect(await d.store.runningProcesses()).toEqual([]);
  });

  it('records the pid and start time of the running attempt', async () => {
    const dir = scriptDir();
    const d = await start({ argv: [stubbornScript(dir)], graceful_stop_seconds: 0 });
    const { run } = await d.scheduler.trigger('ops', 'task');
    const leader = await readPid(join(dir, 'leader.pid'));
    let recorded: Awaited<ReturnType<typeof d.store.runningProcesses>> = [];
    for (let i = 0; i < 100 && recorded.length === 0; i++) {
      recorded = await d.store.runningProcesses();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(recorded).toEqual([
      {
        runId: run.id,
        app: 'ops',
        job: 'task',
        pid: leader,
        startTime: expect.stringMatching(/:\d+$/),
      },
    ]);
    await d.scheduler.cancel(run.id);
  });

  it('3 MB of output against a 100 KB cap: 100 KB kept, the run says output_truncated', async () => {
    const d = await start({
      argv: [
        '/bin/sh',
        '-c',
        'i=0; while [ $i -lt 3072 ]; do printf "%01023d\\n" $i; i=$((i+1)); done',
      ],
      max_output_bytes: 100 * 1024,
    });
    const run = await runOnce(d);
    expect(run).toMatchObject({ outcome: 'success', outputTruncated: true });
    const text = logOf(d, run);
    const marker =
      '--- cronix: output truncated: max_output_bytes (102400) reached, the rest was dropped ---\n';
    expect(text.endsWith(marker)).toBe(true);
    expect(Buffer.byteLength(text) - Buffer.byteLength(marker)).toBe(100 * 1024);
  });

  it('argv never goes through a shell', async () => {
    const dir = scriptDir();
    const hostile = `; touch ${dir}/pwned $(touch ${dir}/pwned) \`id\` $HOME * && |`;
    const d = await start({ argv: ['/bin/echo', hostile] });
    const run = await runOnce(d);
    expect(logOf(d, run)).toBe(`${hostile}\n`);
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
  });

  it('env_from_secrets reach the command and never its log, error or attempt log', async () => {
    const secret = 'db-password-0123456789';
    const d = await start(
      {
        argv: ['/bin/sh', '-c', 'echo "pw=$DB_PASSWORD"; echo "$DB_PASSWORD" >&2; exit 7'],
        env_from_secrets: { DB_PASSWORD: 'env:X' },
      },
      {},
      { DB_PASSWORD: secret },
    );
    const run = await runOnce(d);
    expect(logOf(d, run)).toBe('pw=[REDACTED]\n[REDACTED]\n');
    expect(JSON.stringify(run)).not.toContain(secret);
  });

  it('GET /runs/{id}/log: the text; ?follow=1 streams until the run ends; an HTTP run has none', async () => {
    const d = await start({
      argv: ['/bin/sh', '-c', 'echo one; sleep 1; echo two; sleep 1; echo three'],
    });
    const api = createApi({ scheduler: d.scheduler, store: d.store, token: null, logs: d.logs });
    const { run } = await d.scheduler.trigger('ops', 'task');
    const started = Date.now();
    const res = await api.request(`/api/v1/runs/${run.id}/log?follow=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const reader = res.body!.getReader();
    const seen: { text: string; at: number }[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen.push({ text: Buffer.from(value).toString(), at: Date.now() - started });
    }
    expect(seen.map((s) => s.text).join('')).toBe('one\ntwo\nthree\n');
    // streamed as it came, not at the end
    expect(seen[0]!.at).toBeLessThan(1_500);
    expect((await d.store.getRun(run.id))?.phase).toBe('ended');
    const plain = await api.request(`/api/v1/runs/${run.id}/log`);
    expect(await plain.text()).toBe('one\ntwo\nthree\n');
    const json = (await (await api.request(`/api/v1/runs/${run.id}`)).json()) as Record<
      string,
      unknown
    >;
    expect(json['output_truncated']).toBe(false);
    expect((await api.request(`/api/v1/runs/${run.id}/log?follow=maybe`)).status).toBe(400);
    expect((await api.request(`/api/v1/runs/${run.id}/log?tail=1`)).status).toBe(400);
    expect((await api.request('/api/v1/runs/nope/log')).status).toBe(404);
    // a run of an HTTP job has no output
    const httpRun = newRun({ app: 'web', job: 'ping', phase: 'ended', outcome: 'success' });
    await d.store.write([{ kind: 'insert', run: httpRun }]);
    const none = await api.request(`/api/v1/runs/${httpRun.id}/log`);
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({
      error: {
        code: 'not_found',
        message: `run ${httpRun.id} has no captured output: only command jobs capture output`,
      },
    });
  });

  it('retention deletes a run\u2019s log with the run', async () => {
    const dir = scriptDir();
    const m = manifest('ops', [
      { name: 'task', schedule: '0 0 1 1 *', command: { argv: ['/bin/echo', 'x'] } },
    ]);
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 30));
    daemon = await startTestDaemon(
      clock,
      [m],
      kind === 'sqlite' ? join(dir, 'ledger.sqlite') : freshLedger(kind),
      3600_000,
    );
    const d = daemon;
    const { run } = await d.scheduler.trigger('ops', 'task');
    await d.waitEnded(1);
    const path = d.logs.path(run.id) as string;
    expect(readFileSync(path, 'utf8')).toBe('x\n');
    // past the 1 h retention and an hourly prune
    for (let i = 0; i < 3 * 60; i++) {
      await clock.advance(60_000);
      await settle(3);
    }
    // on PostgreSQL a tick's store work can outlast a settle, and the timers it re-arms then
    // miss the minutes advanced meanwhile: the clock keeps moving until the prune came round
    await until(
      async () => {
        if ((await d.store.getRun(run.id)) === null && !existsSync(path)) return true;
        await clock.advance(60_000);
        await settle(3);
        return undefined;
      },
      30_000,
      'the run and its log pruned',
    );
    expect(await d.store.getRun(run.id)).toBeNull();
    expect(existsSync(path)).toBe(false);
  });
});
