/**
 * Per-fire overhead of `cronix trigger`: from spawning the process to the
 * request arriving at a local HTTP sink, median and p95 over N fires, side by
 * side in the same run with `curl` against the same sink and with `node -e 0`
 * (spawn to exit: the floor of any Node process).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseManifest } from '../src/contract/manifest/index.js';

const CLI = fileURLToPath(new URL('../dist/bin/cronix.mjs', import.meta.url));

export interface OverheadRow {
  what: string;
  medianMs: number;
  p95Ms: number;
  n: number;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

function spawnTimed(
  cmd: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ start: number; exit: number; code: number | null }> {
  const start = performance.now();
  const child = spawn(cmd, args, { stdio: 'ignore', ...(env ? { env } : {}) });
  return new Promise((resolve) =>
    child.on('exit', (code) => resolve({ start, exit: performance.now(), code })),
  );
}

/** Measures `n` fires of each kind, sequentially, on an idle sink. */
export async function benchShimOverhead(n = 40): Promise<OverheadRow[]> {
  let arrival = 0;
  const server = createServer((req, res) => {
    arrival = performance.now();
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/run`;

  const root = mkdtempSync(join(tmpdir(), 'cronix-bench-'));
  const specDir = join(root, 'jobs');
  mkdirSync(specDir);
  const parsed = parseManifest({
    version: 1,
    app: 'bench',
    jobs: [
      { name: 'fire', schedule: '* * * * *', request: { url } },
      {
        name: 'global',
        schedule: '* * * * *',
        request: { url },
        policy: { concurrency: 'Forbid', concurrency_scope: 'global' },
      },
    ],
  });
  if (!parsed.ok) throw new Error('bench manifest invalid');
  for (const job of parsed.manifest.jobs)
    writeFileSync(
      join(specDir, `bench.${job.name}.json`),
      JSON.stringify({ app: 'bench', schedule_index: 0, secret_refs: ['env:CRON_SECRET'], job }),
    );
  const env = {
    PATH: process.env['PATH'],
    CRON_SECRET: 'bench-secret-0123456789abcdef',
    CRONIX_REDIS_URL: process.env['CRONIX_BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    CRONIX_REDIS_PREFIX: `cronix-bench-${process.pid}-${Date.now()}:`,
  };
  const fire = (job: string, i: number) =>
    spawnTimed(
      process.execPath,
      [
        CLI,
        'trigger',
        `bench.${job}`,
        '--spec-dir',
        specDir,
        '--lock-dir',
        join(root, 'lock'),
        '--state-dir',
        join(root, 'state'),
        '--fire-time',
        String(1_767_225_600 + i * 60),
      ],
      env,
    );

  const shim: number[] = [];
  const global: number[] = [];
  const curl: number[] = [];
  const bare: number[] = [];
  const nodeHttp: number[] = [];
  const nodeRequest = `require('http').request(${JSON.stringify(url)}, { method: 'POST' }, (r) => r.resume()).end()`;
  for (let i = 0; i < n + 3; i++) {
    const warm = i < 3; // the first runs warm the page cache
    const s = await fire('fire', i);
    if (s.code !== 0)
      throw new Error(`shim exited ${s.code} (run it by hand with the same flags to see why)`);
    if (!warm) shim.push(arrival - s.start);
    const g = await fire('global', i);
    if (g.code !== 0)
      throw new Error(
        `global-scope shim exited ${g.code} (is Redis at $CRONIX_BENCH_REDIS_URL up?)`,
      );
    if (!warm) global.push(arrival - g.start);
    const c = await spawnTimed('curl', ['-s', '-o', '/dev/null', '-X', 'POST', url]);
    if (!warm) curl.push(arrival - c.start);
    const b = await spawnTimed(process.execPath, ['-e', '0']);
    if (!warm) bare.push(b.exit - b.start);
    const h = await spawnTimed(process.execPath, ['-e', nodeRequest]);
    if (!warm) nodeHttp.push(arrival - h.start);
  }
  server.close();
  const row = (what: string, xs: number[]): OverheadRow => ({
    what,
    medianMs: quantile(xs, 0.5),
    p95Ms: quantile(xs, 0.95),
    n: xs.length,
  });
  return [
    row('cronix trigger: spawn → request at the sink', shim),
    row('cronix trigger, global scope (Redis lock): spawn → request at the sink', global),
    row('curl: spawn → request at the sink', curl),
    row('node -e 0: spawn → exit', bare),
    row('node -e "http.request(…)": spawn → request at the sink', nodeHttp),
  ];
}
