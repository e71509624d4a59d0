/**
 * Host-mode report ingest (SPEC §15): a real `cronix serve` (SQLite) that fires 20 jobs of its
 * own every second (HTTP to a keep-alive sink in this process) and watches an app of 100 jobs
 * receives a burst of 10,000 valid signed `ended` reports (distinct runs) from 256 keep-alive
 * connections (`CRONIX_BENCH_REPORTERS`, default 256). Measured: reports per second (first send → last 200), their latency, that every
 * one is recorded (`cronix_reports_total`), and the daemon's own fires during the burst: how
 * late they arrive at the sink (arrival − fire time) and whether any second was skipped.
 * The bodies are signed before the burst, so the client's HMACs are not in the measurement.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { REPORT_PATH, reportBody, type Report } from '../src/contract/report.js';
import { sign, SIGNATURE_HEADER } from '../src/contract/signature.js';

const CLI = fileURLToPath(new URL('../dist/bin/cronix.mjs', import.meta.url));
const SECRET = 'bench-report-secret-0123456789';
/** Reporters sending at once (hosts of a fleet whose fires fall on one instant). */
const CONNECTIONS = Number(process.env['CRONIX_BENCH_REPORTERS'] ?? 256);

/** The result of one burst. */
export interface ReportsBench {
  reports: number;
  /** Connections sending at once. */
  reporters: number;
  recorded: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The daemon's own fires during the burst. */
  fires: number;
  lateP50Ms: number;
  lateP99Ms: number;
  lateMaxMs: number;
  /** Seconds of the burst window in which an own job did not fire. */
  skippedSeconds: number;
}

const quantile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
};

function report(i: number, at: number): Report {
  const job = `w${i % 100}`;
  const t = at - (Math.floor(i / 100) + 1) * 60_000; // distinct instants per job
  const id = `0193a0b0-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
  return {
    kind: 'ended',
    spoolDropped: 0,
    run: {
      id,
      runKey: `fleet/${job}#${new Date(t).toISOString()}#0123456789abcdef`,
      app: 'fleet',
      job,
      scheduleIndex: 0,
      scheduledTime: t,
      host: `host-${i % 50}`,
      startedAt: t + 200,
      fencingToken: null,
      endedAt: t + 1200,
      outcome: 'success',
      exitCode: 0,
      attempts: 1,
      lastStatus: null,
      error: null,
      durationMs: 1000,
      attemptLog: [
        {
          attempt: 1,
          startedAt: t + 200,
          durationMs: 1000,
          status: null,
          exitCode: 0,
          error: null,
        },
      ],
      output: 'done\n',
      outputTruncated: false,
    },
  };
}

/** Runs the burst against a fresh daemon. */
export async function benchReports(n = 10_000): Promise<ReportsBench> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-bench-reports-'));
  const arrivals: { at: number; fire: number }[] = [];
  const sink = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const fire = Number(req.headers['x-cron-fire-time'] ?? Number.NaN) * 1000;
    arrivals.push({ at: Date.now(), fire });
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;
  const own = Array.from({ length: 20 }, (_, j) => ({
    name: `own${j}`,
    schedule: '* * * * * *',
    request: { url: `${sinkUrl}/own${j}` },
    policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
    auth: { secret_refs: ['raw:bench-secret-0123456789'] },
  }));
  const watched = Array.from({ length: 100 }, (_, j) => ({
    name: `w${j}`,
    schedule: '0 0 1 1 *',
    command: { argv: ['/bin/true'] },
  }));
  writeFileSync(join(dir, 'own.json'), JSON.stringify({ version: 1, app: 'own', jobs: own }));
  writeFileSync(
    join(dir, 'fleet.json'),
    JSON.stringify({ version: 1, app: 'fleet', jobs: watched }),
  );
  const child = spawn(
    process.execPath,
    [
      ...(process.env['CRONIX_BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean),
      CLI,
      'serve',
      join(dir, 'own.json'),
      '--watch',
      join(dir, 'fleet.json'),
      '--report-secret-ref',
      `raw:${SECRET}`,
      '--data-dir',
      join(dir, 'data'),
      '--listen',
      '127.0.0.1:0',
      '--no-auth',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const t = setInterval(() => {
        const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
        if (m) {
          clearInterval(t);
          resolve(m[1] as string);
        }
      }, 20);
      child.once('exit', () => reject(new Error(`serve exited: ${out}`)));
    });
    // warm up: its own jobs fire for 3 s
    await new Promise((r) => setTimeout(r, 3000));
    const now = Date.now();
    const bodies = Array.from({ length: n }, (_, i) => {
      const body = JSON.stringify(reportBody(report(i, now)));
      const header = sign({
        secret: SECRET,
        method: 'POST',
        path: REPORT_PATH,
        body,
        timestamp: Math.floor(now / 1000),
      });
      return { body, header };
    });
    const agent = new Agent({ connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 30_000 });
    const latencies: number[] = [];
    let next = 0;
    let failed = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < n) {
          const b = bodies[next++]!;
          const s = performance.now();
          const res = await request(`${url}${REPORT_PATH}`, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: b.header },
            body: b.body,
          });
          await res.body.text();
          latencies.push(performance.now() - s);
          if (res.statusCode !== 200) failed += 1;
        }
      }),
    );
    const t1 = Date.now();
    await agent.close();
    if (failed > 0) throw new Error(`${failed} reports were not accepted`);
    // the fires of the burst window (and 1 s after it)
    await new Promise((r) => setTimeout(r, 1500));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const recorded = Number(
      /cronix_reports_total\{result="recorded"\} (\d+)/.exec(metrics)?.[1] ?? 0,
    );
    const during = arrivals.filter((a) => a.fire >= t0 && a.fire <= t1);
    const late = during.map((a) => a.at - a.fire);
    const seconds = new Set(during.map((a) => Math.floor(a.fire / 1000)));
    const windowSeconds = Math.floor(t1 / 1000) - Math.ceil(t0 / 1000) + 1;
    return {
      reports: n,
      reporters: CONNECTIONS,
      recorded,
      seconds: (t1 - t0) / 1000,
      perSecond: n / ((t1 - t0) / 1000),
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      fires: during.length,
      lateP50Ms: quantile(late, 0.5),
      lateP99Ms: quantile(late, 0.99),
      lateMaxMs: late.length ? Math.max(...late) : 0,
      skippedSeconds: Math.max(0, windowSeconds - seconds.size),
    };
  } finally {
    child.kill(process.env['CRONIX_BENCH_NODE_ARGS'] ? 'SIGINT' : 'SIGKILL');
    await new Promise((r) => setTimeout(r, process.env['CRONIX_BENCH_NODE_ARGS'] ? 3000 : 0));
    sink.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
