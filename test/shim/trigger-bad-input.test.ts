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
      /unknown option "--frobnicate" \(run "cronix trigger --help"/,
    );
    // -o json is a reconciler habit: named plainly, not Node's raw parseArgs wording
    const o = await runShim('app.job', [...dirArgs(dirs), '-o', 'json']);
    expectOneClearLine(o, 3, /unknown option "-o": the shim always logs JSON lines/);
    expect(o.stderr + o.stdout).not.toMatch(/To specify a positional argument/);
  });

  it("accepts and ignores the public implementation's --backend and --otel (SPEC §14)", async () => {
    const dirs = shimDirs();
    // no spec file: reaching the spec lookup proves the flags were accepted
    for (const extra of [
      ['--backend', 'crontab'],
      ['--backend=systemd-timer', '--otel'],
      ['--otel=false', '--backend', 'kubernetes'],
    ]) {
      expectOneClearLine(
        await runShim('app.nope', [...extra, ...dirArgs(dirs)]),
        3,
        /no spec file .*app\.nope\.json/,
      );
    }
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

  it('a --fire-time out of range → 3, naming the flag and the accepted range', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob());
    for (const value of ['9999999999999', '-1', '2200-01-01T00:00:00Z']) {
      const run = await runShim('app.job', [...dirArgs(dirs), `--fire-time=${value}`]);
      expectOneClearLine(
        run,
        3,
        /^--fire-time: ".*" is outside the accepted range 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z \(Unix seconds 0 to 7258118399\)$/,
      );
    }
  });

  it.each([
    ['null', null, /job\/auth: expected an object, found null/],
    ['"x"', 'x', /job\/auth: expected an object, found "x"/],
    ['{"secret_refs": 5}', { secret_refs: 5 }, /job\/auth\/secret_refs: expected an array/],
  ])('job.auth %s → 3, naming job/auth like a manifest', async (_name, auth, pattern) => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', { ...validJob(), auth });
    expectOneClearLine(await runShim('app.job', dirArgs(dirs)), 3, pattern);
  });

  it('job.auth missing or {} is valid in a manifest, so the spec fires (the spec-level secret_refs sign)', async () => {
    const own = await startSink(); // this test sends; the file's sink must stay empty
    try {
      for (const auth of [undefined, {}]) {
        const dirs = shimDirs();
        const { auth: _dropped, ...job } = validJob();
        const spec = { ...job, request: { ...job.request, url: `${own.url}/x` } };
        writeSpec(dirs.specDir, 'app', auth === undefined ? spec : { ...spec, auth });
        const before = own.requests.length;
        const run = await runShim('app.job', dirArgs(dirs));
        expect(run.code).toBe(0);
        expect(run.lines.at(-1)).toMatchObject({ event: 'success' });
        expect(own.requests.length).toBe(before + 1);
      }
    } finally {
      await own.close();
    }
  });

  it.each([
    [5, /secret_refs: expected an array of at most 8 entries, found 5/],
    [[7], /secret_refs\/0: expected a secret ref such as env:CRON_SECRET.*, found 7/],
  ])('spec secret_refs %j → 3, naming it', async (refs, pattern) => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob(), { secret_refs: refs as never });
    expectOneClearLine(await runShim('app.job', dirArgs(dirs)), 3, pattern);
  });

  it.each(['', 'Bad Name', 'a\r\nX-Injected: 1'])(
    'header name %j → 3, naming the header like a manifest (not retries-exhausted)',
    async (name) => {
      const dirs = shimDirs();
      const job = validJob();
      writeSpec(dirs.specDir, 'app', {
        ...job,
        request: { ...job.request, headers: { [name]: 'v' } },
      });
      const run = await runShim('app.job', dirArgs(dirs));
      expectOneClearLine(
        run,
        3,
        /job\/request\/headers\/[^]*: expected a header name that is an HTTP token/,
      );
      expect(String(run.lines[0]?.['msg'])).toContain(JSON.stringify(name));
    },
  );

  it('a header value with CR/LF → 3, naming the header', async () => {
    const dirs = shimDirs();
    const job = validJob();
    writeSpec(dirs.specDir, 'app', {
      ...job,
      request: { ...job.request, headers: { 'X-Ok': 'a\r\nX-Injected: 1' } },
    });
    expectOneClearLine(await runShim('app.job', dirArgs(dirs)), 3, /job\/request\/headers\/X-Ok: /);
  });

  it('a 1 MB time zone → 3 with a short line naming job/timezone and a cut value', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', { ...validJob(), timezone: 'A'.repeat(1_000_000) });
    const run = await runShim('app.job', dirArgs(dirs));
    expectOneClearLine(run, 3, /job\/timezone: unknown time zone "A+…\(\d+ more characters\)"/);
    expect(run.stdout.length).toBeLessThan(8 * 1024);
  });

  it('a secret shorter than 16 bytes → 3, naming the ref and its length, never the value', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob());
    const run = await runShim('app.job', dirArgs(dirs), { CRON_SECRET: 's' });
    expectOneClearLine(
      run,
      3,
      /^secret too short: env:CRON_SECRET resolves to 1 bytes; an HMAC signing secret needs at least 16 bytes/,
    );
    // a one-character secret would otherwise be "redacted" out of every word of every line
    expect(run.stdout).toContain('"event":"internal-error"');
  });

  it('Enqueue in a spec → 3: it needs the daemon', async () => {
    const dirs = shimDirs();
    writeSpec(dirs.specDir, 'app', validJob({ policy: { concurrency: 'Enqueue' } }));
    expectOneClearLine(await runShim('app.job', dirArgs(dirs)), 3, /Enqueue.*needs the daemon/);
  });
});
