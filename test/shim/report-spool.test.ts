/**
 * The report spool of one host (SPEC §15): bounded with the oldest dropped and the drop count
 * sent, and shared by concurrent shims without a report sent twice or lost (each drainer holds
 * the spool's flock; separate `FlockBackend`s contend exactly as separate processes do).
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReport, type Report } from '../../src/contract/report.js';
import { reportEndpoint } from '../../src/contract/report-target.js';
import {
  ReportSpool,
  SPOOL_MAX_BYTES,
  SPOOL_MAX_REPORTS,
  spoolDir,
} from '../../src/shim/report-spool.js';
import { ShimReporter } from '../../src/shim/reporter.js';
import { tempDir } from '../helpers/common.js';
import { startSink, type Sink } from '../helpers/sink.js';

const SECRET = 'report-secret-0123456789';
let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});

let seq = 0;
/** A minimal valid `ended` report with a fresh run id. */
function report(tag: string): Report {
  const id = `00000000-0000-7000-8000-${String(++seq).padStart(12, '0')}`;
  const t = Date.UTC(2026, 0, 1);
  return {
    kind: 'ended',
    spoolDropped: 0,
    run: {
      id,
      runKey: `app/job#2026-01-01T00:00:00Z#${tag}`,
      app: 'app',
      job: 'job',
      scheduleIndex: 0,
      scheduledTime: t,
      host: 'h',
      startedAt: t,
      fencingToken: null,
      endedAt: t,
      outcome: 'success',
      exitCode: 0,
      attempts: 1,
      lastStatus: 200,
      error: null,
      durationMs: 0,
      attemptLog: [],
      output: null,
      outputTruncated: false,
    },
  };
}

function reporter(stateDir: string, timeoutMs = 2000): ShimReporter {
  return new ShimReporter({
    url: sink.url,
    secretRefs: ['env:S'],
    stateDir,
    host: 'h',
    env: { S: SECRET },
    log: () => undefined,
    timeoutMs,
  });
}

const received = (from: number): Report[] =>
  sink.requests.slice(from).map((r) => {
    const p = parseReport(JSON.parse(r.bodyText));
    if (!p.ok) throw new Error(p.error.message);
    return p.report;
  });

describe('report spool', () => {
  it(`keeps at most ${SPOOL_MAX_REPORTS} reports: the oldest go, and the count rides on the next sent report`, async () => {
    const stateDir = tempDir('spool-bound');
    const spool = new ReportSpool(stateDir, 'h');
    const url = reportEndpoint(sink.url);
    const body = (i: number): string => JSON.stringify({ kind: 'ended', run: { i } });
    for (let i = 0; i < SPOOL_MAX_REPORTS + 3; i++) {
      spool.add({ url, secretRefs: ['env:S'], body: body(i) });
    }
    sink.setScript(() => ({ status: 200 }));
    const before = sink.requests.length;
    const r = reporter(stateDir, 2000);
    r.send(report('new'));
    await r.settle();
    const first = JSON.parse(sink.requests[before]!.bodyText) as Record<string, unknown>;
    // 10,003 spooled + the new one: the 4 oldest dropped, their count on the first report sent
    expect(first).toEqual({ kind: 'ended', run: { i: 4 }, spool_dropped: 4 });
    const rest = sink.requests.slice(before + 1).map((q) => JSON.parse(q.bodyText) as unknown);
    expect(rest.every((b) => (b as Record<string, unknown>)['spool_dropped'] === undefined)).toBe(
      true,
    );
    expect(spool.dropped()).toBe(0);
    const left = readdirSync(spoolDir(stateDir)).filter((f) => f.endsWith('.json')).length;
    // the report in flight at the deadline arrived but stays spooled (resent later, a no-op)
    expect(left + (sink.requests.length - before) - SPOOL_MAX_REPORTS).toBeOneOf([0, 1]);
  }, 60_000);

  it('keeps at most 50 MB: the oldest beyond are dropped and counted', () => {
    const stateDir = tempDir('spool-bytes');
    const spool = new ReportSpool(stateDir, 'h');
    mkdirSync(spoolDir(stateDir));
    const mb = 1024 * 1024;
    // sizes are in the names (no stat per report): six spooled reports of 12 MB each
    const items = Array.from({ length: 6 }, (_, i) => ({
      name: `${String(i).padStart(15, '0')}-1-000001-${12 * mb}.json`,
      bytes: 12 * mb,
    }));
    const kept = spool.trim(items);
    expect(kept.map((i) => i.name)).toEqual(items.slice(2).map((i) => i.name)); // 48 MB left
    expect(spool.dropped()).toBe(2);
    expect(SPOOL_MAX_BYTES).toBe(50 * mb);
  });

  it('concurrent shims of one host send every spooled report exactly once, in order', async () => {
    const stateDir = tempDir('spool-race');
    sink.setScript(() => ({ status: 500 }));
    const down = reporter(stateDir, 500);
    const tags = Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    for (const tag of tags) down.send(report(tag));
    await down.settle();
    expect(readdirSync(spoolDir(stateDir)).filter((f) => f.endsWith('.json'))).toHaveLength(40);

    // the server is back, slowly: several shims report at once and race for the spool
    sink.setScript(() => ({ status: 200, delayMs: 5 }));
    const before = sink.requests.length;
    const shims = Array.from({ length: 6 }, () => reporter(stateDir));
    shims.forEach((s, i) => s.send(report(`z${i}`)));
    await Promise.all(shims.map((s) => s.settle()));
    // on a loaded machine a shim may give up waiting for the lock (its report stays spooled):
    // later reports from this host send the rest
    const spooledNow = (): number =>
      readdirSync(spoolDir(stateDir)).filter((f) => f.endsWith('.json')).length;
    for (let round = 0; spooledNow() > 0 && round < 10; round++) {
      const late = reporter(stateDir);
      late.send(report(`late${round}`));
      await late.settle();
    }
    expect(spooledNow()).toBe(0);
    const got = received(before).map((r) => r.run.runKey.split('#')[2]!);
    expect(new Set(got).size).toBe(got.length); // nothing twice
    expect(got.slice(0, 40)).toEqual(tags); // the spool first, in order
    expect(got.filter((t) => t.startsWith('z')).sort()).toEqual([
      'z0',
      'z1',
      'z2',
      'z3',
      'z4',
      'z5',
    ]);
  });
});
