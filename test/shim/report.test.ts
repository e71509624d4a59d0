/**
 * The shim's reports (SPEC §15), in-process against a real HTTP server that records what
 * arrives: `started` and `ended` with their fields, signed by the report secret; contention
 * (`skipped`) and duplicates; a command job's output tail; the spool when the server is down,
 * failing or slow — and that the exit code never depends on it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReport, type Report } from '../../src/contract/report.js';
import { verify } from '../../src/contract/signature.js';
import { FlockBackend } from '../../src/locks/flock.js';
import { freePort } from '../helpers/common.js';
import { normalizedJob, shimDirs, TEST_SECRET, writeSpec, type ShimDirs } from '../helpers/shim.js';
import { sequence, startSink, type RecordedRequest, type Sink } from '../helpers/sink.js';
import { hangingTransport, recordingTransport, runInProcess } from './in-process.js';

const REPORT_SECRET = 'report-secret-0123456789';
const HOST = 'host-a';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});

/** A report as the server would judge it: signature checked, body parsed by the contract. */
function judged(r: RecordedRequest): Report {
  expect(r.method).toBe('POST');
  expect(r.url).toBe('/base/api/v1/reports');
  const v = verify({
    header: r.headers['x-cron-signature'] as string,
    secrets: [REPORT_SECRET],
    method: 'POST',
    path: r.url,
    body: r.body,
    now: Date.now() / 1000,
  });
  expect(v.ok).toBe(true);
  const parsed = parseReport(JSON.parse(r.bodyText));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
  return parsed.report;
}

let n = 0;
/** A fresh job that reports to `url` (default the sink). */
function setup(
  raw: Record<string, unknown> = {},
  url = `${sink.url}/base`,
): { dirs: ShimDirs; target: string; argv: string[] } {
  const dirs = shimDirs('cronix-report-');
  const name = `job-${++n}`;
  writeSpec(
    dirs.specDir,
    'app',
    normalizedJob('app', {
      name,
      schedule: '*/5 * * * *',
      request: { url: 'http://app.invalid/run' },
      policy: { timeout_seconds: 5, retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 } },
      ...raw,
    }),
    { report_to: url, report_secret_refs: ['env:REPORT_SECRET'] },
  );
  const target = `app.${name}`;
  const argv = [
    target,
    '--spec-dir',
    dirs.specDir,
    '--lock-dir',
    dirs.lockDir,
    '--state-dir',
    dirs.stateDir,
  ];
  return { dirs, target, argv };
}

const env = { CRON_SECRET: TEST_SECRET, REPORT_SECRET, CRONIX_HOST_ID: HOST };
const spooled = (dirs: ShimDirs): string[] => {
  try {
    return readdirSync(join(dirs.stateDir, 'reports')).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
};

describe('reports of one fire', () => {
  it('a success sends started then ended, signed by the report secret, with the §7 fields', async () => {
    const { dirs, argv } = setup();
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    const run = await runInProcess(argv, {
      env,
      transport: recordingTransport(async () => ({
        kind: 'response',
        status: 503,
        bodyExcerpt: 'x',
      })),
    });
    expect(run.code).toBe(2); // retries exhausted: the job's app answered 503 twice
    const got = sink.requests.slice(before).map(judged);
    expect(got.map((r) => r.kind)).toEqual(['started', 'ended']);
    const [started, ended] = got as [Report, Report];
    const start = run.lines.find((l) => l['event'] === 'fire-start')!;
    expect(started.run).toMatchObject({
      id: start['run_id'],
      runKey: start['run_key'],
      app: 'app',
      scheduleIndex: 0,
      scheduledTime: (start['fire_time'] as number) * 1000,
      host: HOST,
      fencingToken: null,
      outcome: null,
    });
    expect(ended.run).toMatchObject({
      id: started.run.id,
      runKey: started.run.runKey,
      outcome: 'retries_exhausted',
      exitCode: 2,
      attempts: 2,
      lastStatus: 503,
      error: 'HTTP 503',
      output: null,
    });
    expect(ended.run.attemptLog.map((a) => [a.attempt, a.status, a.exitCode])).toEqual([
      [1, 503, null],
      [2, 503, null],
    ]);
    expect(ended.run.durationMs).toBeGreaterThanOrEqual(0);
    expect(ended.run.endedAt!).toBeGreaterThanOrEqual(ended.run.startedAt);
    expect(spooled(dirs)).toEqual([]);
    expect(run.lines.filter((l) => l['event'] === 'report')).toEqual([]);
  });

  it('a command job reports the last 64 KiB of its output', async () => {
    const { argv } = setup({
      request: undefined,
      command: {
        argv: [process.execPath, '-e', "process.stdout.write('a'.repeat(100000) + 'THE-END')"],
      },
    });
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    const run = await runInProcess(argv, { env });
    expect(run.code).toBe(0);
    const ended = sink.requests.slice(before).map(judged)[1]!;
    expect(ended.run.outcome).toBe('success');
    expect(Buffer.byteLength(ended.run.output!)).toBe(64 * 1024);
    expect(ended.run.output!.endsWith('THE-END')).toBe(true);
    expect(ended.run.outputTruncated).toBe(true);
    expect(ended.run.lastStatus).toBeNull();
    expect(ended.run.attemptLog).toMatchObject([{ attempt: 1, exitCode: 0, status: null }]);
  });

  it('contention is one ended report, skipped; a duplicate is one ended report, duplicate', async () => {
    const { dirs, target, argv } = setup();
    sink.setScript(sequence([200]));
    const locks = new FlockBackend(dirs.lockDir);
    const held = await locks.acquire(target, {
      ttlMs: 0,
      holder: { pid: 1, host: 'elsewhere', acquiredAt: Date.now() },
    });
    expect(held.ok).toBe(true);
    let before = sink.requests.length;
    const contended = await runInProcess(argv, { env });
    expect(contended.code).toBe(4);
    const skipped = sink.requests.slice(before).map(judged);
    expect(skipped.map((r) => [r.kind, r.run.outcome, r.run.exitCode])).toEqual([
      ['ended', 'skipped', 4],
    ]);
    expect(skipped[0]!.run.error).toMatch(/held by pid 1 on elsewhere/);
    await locks.close();

    const fireTime = ['--fire-time', '2026-01-01T00:05:00Z'];
    expect((await runInProcess([...argv, ...fireTime], { env })).code).toBe(0);
    before = sink.requests.length;
    const again = await runInProcess([...argv, ...fireTime], { env });
    expect(again.code).toBe(0);
    expect(sink.requests.slice(before).map((r) => [judged(r).kind, judged(r).run.outcome])).toEqual(
      [['ended', 'duplicate']],
    );
  });

  it('a fire stopped by SIGTERM mid-attempt reports ended stopped (exit 75)', async () => {
    const { argv } = setup();
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    const transport = hangingTransport();
    const run = await runInProcess(argv, {
      env,
      transport,
      onStart: (signals) => {
        const poll = setInterval(() => {
          if (transport.sent.length > 0) {
            clearInterval(poll);
            signals.emit('SIGTERM');
          }
        }, 10);
      },
    });
    expect(run.code).toBe(75);
    const got = sink.requests.slice(before).map(judged);
    expect(got.map((r) => [r.kind, r.run.outcome, r.run.exitCode])).toEqual([
      ['started', null, null],
      ['ended', 'stopped', 75],
    ]);
    expect(got[1]!.run.attemptLog).toHaveLength(1);
  });

  it('a bad report URL turns reporting off with a warning; the fire runs as always', async () => {
    const { argv } = setup({}, 'ftp://nowhere');
    const run = await runInProcess(argv, { env });
    expect(run.code).toBe(0);
    expect(run.lines.find((l) => l['event'] === 'report')?.['msg']).toMatch(
      /this fire is not reported: report_to: expected an http:\/\/ or https:\/\/ URL/,
    );
  });
});

describe('reporting never hurts the fire', () => {
  it('server down → same exit code, reports spooled; back up → sent in order, each once', async () => {
    const port = await freePort();
    const { dirs, argv } = setup({}, `http://127.0.0.1:${port}/base`);
    const fires = ['00:05', '00:10', '00:15'].map((t) => ['--fire-time', `2026-01-01T${t}:00Z`]);
    for (const f of fires) {
      const run = await runInProcess([...argv, ...f], { env });
      expect(run.code).toBe(0);
    }
    expect(spooled(dirs)).toHaveLength(6);
    // the server comes back: on the next fire's first report, the spool goes first
    const back = await startSink(undefined, port);
    try {
      const run = await runInProcess([...argv, '--fire-time', '2026-01-01T00:20:00Z'], { env });
      expect(run.code).toBe(0);
      const got = back.requests.map(judged);
      expect(got.map((r) => `${r.run.runKey.split('#')[1]} ${r.kind}`)).toEqual([
        '2026-01-01T00:05:00Z started',
        '2026-01-01T00:05:00Z ended',
        '2026-01-01T00:10:00Z started',
        '2026-01-01T00:10:00Z ended',
        '2026-01-01T00:15:00Z started',
        '2026-01-01T00:15:00Z ended',
        '2026-01-01T00:20:00Z started',
        '2026-01-01T00:20:00Z ended',
      ]);
      expect(spooled(dirs)).toEqual([]);
    } finally {
      await back.close();
    }
  });

  it('HTTP 500 keeps the report; HTTP 400 drops it (it would block every later one)', async () => {
    const { dirs, argv } = setup();
    sink.setScript(sequence([500]));
    expect((await runInProcess(argv, { env })).code).toBe(0);
    expect(spooled(dirs)).toHaveLength(2);
    sink.setScript(sequence([400]));
    const run = await runInProcess([...argv, '--fire-time', '2026-01-01T00:05:00Z'], { env });
    expect(run.code).toBe(0);
    expect(spooled(dirs)).toEqual([]);
    expect(run.lines.filter((l) => l['event'] === 'report').map((l) => l['msg'])).toContain(
      `report refused by ${sink.url}/base/api/v1/reports (HTTP 400); dropped`,
    );
  });

  it('a server that never answers costs at most 2 s per report; the exit code is the same', async () => {
    const { dirs, argv } = setup();
    sink.setScript(() => ({ hang: true }));
    const t0 = performance.now();
    const run = await runInProcess(argv, { env });
    const elapsed = performance.now() - t0;
    expect(run.code).toBe(0);
    // started (in parallel with the attempt) then ended: 2 × 2 s, plus a loaded machine's slack
    expect(elapsed).toBeLessThan(4000 + 2500);
    expect(elapsed).toBeGreaterThan(1900);
    expect(spooled(dirs)).toHaveLength(2);
  });
});
