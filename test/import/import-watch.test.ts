/**
 * `cronix import crontab --watch` (host monitoring for lines that keep running under cron):
 * the watched manifest and the ping suffix of each line, proven against a real
 * `cronix serve --watch` of that manifest — each line, run by `sh -c` with its suffix exactly as
 * cron runs it, is recorded with its exit code. Runs the built binary (`npm run build` first).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, tempDir, until } from '../helpers/common.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { cronixAsync } from '../reconcile/cli-helpers.js';

const SECRET = 'import-watch-secret-0123456789';
const CRONTAB = ['*/5 * * * * /bin/true', '0 3 * * * /bin/sh -c "exit 3"', ''].join('\n');

describe('import crontab --watch', () => {
  let served: Served | undefined;
  afterAll(async () => {
    served?.child.kill('SIGKILL');
    await served?.exited;
  });

  it('prints a watched manifest and a suffix per line that a real serve --watch records', async () => {
    const dir = tempDir('import-watch');
    const crontab = join(dir, 'crontab');
    writeFileSync(crontab, CRONTAB);
    const port = await freePort();
    const server = `http://127.0.0.1:${port}`;
    const env = { ...process.env, REPORT_SECRET: SECRET };
    const r = await cronixAsync(
      [
        'import',
        'crontab',
        crontab,
        '--app',
        'ops',
        '--cron-timezone',
        'UTC',
        '--watch',
        '--server',
        server,
        '--report-secret-ref',
        'env:REPORT_SECRET',
        '-o',
        'json',
      ],
      env,
    );
    expect(r.status, r.stderr).toBe(0);
    const manifest = JSON.parse(r.stdout) as { jobs: Record<string, Record<string, unknown>>[] };
    expect(manifest.jobs.map((j) => j['policy']?.['watch'])).toEqual([
      { grace_seconds: 120 },
      { grace_seconds: 120 },
    ]);
    const verdicts = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const appends = verdicts.filter((v) => v['append'] !== undefined);
    expect(appends.map((v) => v['line'])).toEqual([1, 2]);
    expect(appends[0]!['append']).toMatch(
      new RegExp(
        `^; curl -fsS -m 5 --retry 3 -o /dev/null -X POST "${server}/api/v1/ping/ops/${String(appends[0]!['job'])}/\\$\\?\\?token=[0-9a-f]{32}"$`,
      ),
    );
    expect(verdicts.at(-1)).toMatchObject({ level: 'info' });
    expect(String(verdicts.at(-1)?.['message'])).toMatch(/cron keeps running the imported lines/);

    // the server watches that manifest; each line runs with its suffix, as cron would run it
    writeFileSync(join(dir, 'watch.json'), r.stdout);
    served = await spawnServe(dir, port, {
      manifests: [],
      args: ['--watch', join(dir, 'watch.json'), '--report-secret-ref', 'env:REPORT_SECRET'],
      env: { PATH: process.env['PATH'], REPORT_SECRET: SECRET },
    });
    const lines = CRONTAB.split('\n').filter((l) => l !== '');
    for (const [i, line] of lines.entries()) {
      const command = line.split(' ').slice(5).join(' ');
      await promisify(execFile)('/bin/sh', ['-c', `${command}${String(appends[i]!['append'])}`]);
    }
    for (const [i, code] of [0, 3].entries()) {
      const job = String(appends[i]!['job']);
      const run = await until(
        async () =>
          (
            (await api(served!, 'GET', `/api/v1/runs?app=ops&job=${job}`)).json['runs'] as
              Record<string, unknown>[] | undefined
          )?.[0],
        15_000,
        `the ping of ${job}`,
      );
      expect(run).toMatchObject({
        exit_code: code,
        outcome: code === 0 ? 'success' : expect.any(String),
      });
    }
  }, 60_000);

  it('--watch needs --server and --report-secret-ref (exit 2); an unresolved secret is exit 1', async () => {
    const dir = tempDir('import-watch-bad');
    const crontab = join(dir, 'crontab');
    writeFileSync(crontab, CRONTAB);
    const base = ['import', 'crontab', crontab, '--cron-timezone', 'UTC'];
    const a = await cronixAsync([...base, '--watch']);
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/--watch needs --server URL .* and --report-secret-ref REF/);
    const b = await cronixAsync([
      ...base,
      '--watch',
      '--server',
      'ftp://x',
      '--report-secret-ref',
      'env:X',
    ]);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/--server: expected an http:\/\/ or https:\/\/ URL/);
    const c = await cronixAsync(
      [
        ...base,
        '--watch',
        '--server',
        'https://x.example',
        '--report-secret-ref',
        'env:CRONIX_TEST_UNSET_SECRET',
      ],
      { PATH: process.env['PATH'] },
    );
    expect(c.status).toBe(1);
    expect(c.stderr).toMatch(/--report-secret-ref env:CRONIX_TEST_UNSET_SECRET: /);
    expect(c.stdout).toBe('');
  }, 60_000);
});
