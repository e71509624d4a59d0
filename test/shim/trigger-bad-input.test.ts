/**
 * Bad input never reaches the network and never prints a stack trace: the
 * SPEC's exit code and one clear JSON log line naming the problem.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type Sink } from '../helpers/sink.js';
import {
  dirArgs,
  normalizedJob,
  runShim,
  shimDirs,
  writeSpec,
  type ShimRun,
} from '../helpers/shim.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});

function expectOneClearLine(run: ShimRun, code: number, pattern: RegExp): void {
  expect(run.code).toBe(code);
  const errors = run.lines.filter((l) => l['level'] === 'error');
  expect(errors).toHaveLength(1);
  expect(errors[0]?.['msg']).toMatch(pattern);
  expect(run.stdout + run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(run.stderr).toBe('');
  expect(sink.requests).toHaveLength(0);
}

function validJob(extra: Record<string, unknown> = {}) {
  return normalizedJob('app', {
    name: 'job',
    schedule: '@hourly',
    request: { url: `${sink.url}/x` },
    ...extra,
  });
}

describe('cronix trigger: bad input', () => {
  it('missing spec file → 3, naming the path and the fix', async () => {
    const dirs = shimDirs();
    const run = await runShim('app.job', dirArgs(dirs));
    expectOneClearLine(run, 3, /no spec file .*app\.job\.json.*cronix apply/);
  });

  it('corrupt spec file (not JSON) → 3', async () => {
    const dirs = shimDirs();
    writeFileSync(join(dirs.specDir, 'app.job.json'), '{"app": "app", "job": ');
    expectOneClearLine(await runShim('app.job', dirArgs(dirs)), 3, /is not valid JSON/);
  });

  it('spec with a broken job → 3, naming the field', async () => {
    const dirs = shimDirs();
    const job = { ...validJob(), policy: { ...validJob().policy, timeout_seconds: 0 } };
    writeSpec(dirs.specDir, 'app', job);
    expectOneClearLine(await runShim('app.job', dirArgs(dirs)), 3, /job\/policy\/timeout_seconds/);
  });

  it('unknown job → 3', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob());
    expectOneClearLine(
      await runShim('app.nope', dirArgs(dirs)),
      3,
      /no spec file .*app\.nope\.json/,
    );
  });

  it('malformed job argument and unknown flags → 3', async () => {
    const dirs = shimDirs();
    expectOneClearLine(await runShim('App.Job', dirArgs(dirs)), 3, /<app>\.<job> must look like/);
    expectOneClearLine(
      await runShim('app.job', [...dirArgs(dirs), '--frobnicate']),
      3,
      /Unknown option '--frobnicate'/,
    );
    expectOneClearLine(
      await runShim('app.job', [...dirArgs(dirs), '--contended-exit', '5']),
      3,
      /--contended-exit must be 4 or 75/,
    );
  });

  it('unwritable lock dir → 3', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob());
    const blocker = join(dirs.root, 'a-file');
    writeFileSync(blocker, '');
    const run = await runShim('app.job', [...dirArgs(dirs), '--lock-dir', join(blocker, 'locks')]);
    expectOneClearLine(run, 3, /lock dir .* (is not writable|cannot be created)|ENOTDIR/);
  });

  it('unwritable state dir → 3', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob());
    const blocker = join(dirs.root, 'a-file');
    writeFileSync(blocker, '');
    const run = await runShim('app.job', [...dirArgs(dirs), '--state-dir', join(blocker, 'state')]);
    expectOneClearLine(run, 3, /state dir .* is not writable/);
  });

  it('no resolvable secret → 3, naming the ref, never a value', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob(), {
      secret_refs: ['env:MISSING_SECRET', 'file:/nonexistent/secret'],
    });
    const run = await runShim('app.job', dirArgs(dirs));
    expectOneClearLine(
      run,
      3,
      /no secret resolved .*env:MISSING_SECRET.*file:\/nonexistent\/secret/,
    );
  });

  it('global scope without a Redis URL, and a malformed Redis URL → 3', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob({ policy: { concurrency_scope: 'global' } }));
    expectOneClearLine(
      await runShim('app.job', dirArgs(dirs)),
      3,
      /global scope needs a Redis lock backend/,
    );
    const bad = await runShim('app.job', [
      ...dirArgs(dirs),
      '--lock-backend',
      'redis//user:hunter2@localhost',
    ]);
    expectOneClearLine(bad, 3, /redis/i);
    expect(bad.stdout).not.toContain('hunter2');
  });

  it('an invalid --fire-time → 3', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob());
    expectOneClearLine(
      await runShim('app.job', [...dirArgs(dirs), '--fire-time', 'yesterday']),
      3,
      /--fire-time: expected RFC 3339/,
    );
  });

  it('Enqueue in a spec → 3: it needs the daemon', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob({ policy: { concurrency: 'Enqueue' } }));
    expectOneClearLine(await runShim('app.job', dirArgs(dirs)), 3, /Enqueue.*needs the daemon/);
  });
});
