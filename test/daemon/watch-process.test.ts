/**
 * `cronix serve --watch` as a real process (SPEC §15): signed reports become ledger rows (a
 * resend changes nothing), bad ones get a §7 error and change nothing, an expected fire with no
 * report becomes `missed` within its grace, a start with no end becomes `crashed`, and the
 * watched jobs are listed as fired by hosts. One daemon for the file; a grace of 10 s (the
 * least allowed) and a schedule every second keep it short.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cronix } from '../helpers/cli.js';
import { until } from '../helpers/common.js';
import { REPORT_SECRET, sendReport } from '../helpers/reports.js';
import { api, spawnServe, type Served } from '../helpers/serve.js';
import { tempDir } from '../helpers/common.js';
import { endOf, report } from './report-fixtures.js';

const watched = {
  version: 1,
  app: 'shop',
  jobs: [
    {
      name: 'every',
      schedule: '* * * * * *',
      command: { argv: ['/bin/true'] },
      policy: { timeout_seconds: 1, retries: { max_attempts: 1 }, watch: { grace_seconds: 10 } },
    },
    {
      name: 'nightly',
      schedule: '0 3 * * *',
      command: { argv: ['/bin/true'] },
      policy: { timeout_seconds: 1, retries: { max_attempts: 1 }, watch: { grace_seconds: 10 } },
    },
  ],
};

type Run = Record<string, unknown>;

describe('serve --watch (real process)', () => {
  let served: Served;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir('watch-proc');
    writeFileSync(join(dir, 'watch.json'), JSON.stringify(watched));
    served = await spawnServe(dir, 0, {
      manifests: [],
      args: ['--watch', join(dir, 'watch.json'), '--report-secret-ref', 'env:REPORT_SECRET'],
      env: { PATH: process.env['PATH'], REPORT_SECRET },
    });
  }, 30_000);
  afterAll(async () => {
    served?.child.kill('SIGKILL');
    await served?.exited;
  });

  const runsOf = async (job: string): Promise<Run[]> =>
    (await api(served, 'GET', `/api/v1/runs?app=shop&job=${job}&limit=1000`)).json['runs'] as Run[];

  it('records signed reports as host runs; a resent report answers 200 and changes nothing', async () => {
    const at = Math.floor(Date.now() / 1000) * 1000;
    const started = report('started', at, { job: 'every', host: 'web-7', startedAt: at + 200 });
    const a = await sendReport(served.url, started);
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({
      result: 'recorded',
      run: { trigger: 'host', phase: 'running' },
    });
    const end = endOf(started, { output: 'backed up 3 files\n', exitCode: 0 });
    expect((await sendReport(served.url, end)).json['result']).toBe('ended');
    const again = await sendReport(served.url, end);
    expect(again.status).toBe(200);
    expect(again.json['result']).toBe('unchanged');
    expect((await sendReport(served.url, started)).json['result']).toBe('unchanged');
    const run = (await api(served, 'GET', `/api/v1/runs/${started.run.id}`)).json;
    expect(run).toMatchObject({
      trigger: 'host',
      host: 'web-7',
      outcome: 'success',
      exit_code: 0,
      attempts: 1,
    });
    const log = await fetch(`${served.url}/api/v1/runs/${started.run.id}/log`, {
      headers: { authorization: `Bearer ${served.token}` },
    });
    expect(await log.text()).toBe('backed up 3 files\n');
    expect((await runsOf('every')).filter((r) => r['id'] === started.run.id)).toHaveLength(1);
    const jobs = (await api(served, 'GET', '/api/v1/jobs')).json['jobs'] as Run[];
    expect(jobs.find((j) => j['job'] === 'every')).toMatchObject({
      fired_by: 'host',
      last_report: { run_id: started.run.id, host: 'web-7' },
    });
    const trig = await api(served, 'POST', '/api/v1/jobs/shop/every/trigger', {});
    expect(trig.status).toBe(409);
  });

  it('the clock check: a report signed 90 s off the server clock is recorded, flagged on the run and counted', async () => {
    const at = Math.floor(Date.now() / 1000) * 1000;
    const skewed = report('started', at, { job: 'nightly', host: 'slow-clock' });
    const res = await sendReport(served.url, skewed, {
      timestamp: Math.floor(Date.now() / 1000) - 90,
    });
    expect(res.status).toBe(200);
    const run = (await api(served, 'GET', `/api/v1/runs/${skewed.run.id}`)).json;
    expect(run['clock_skewed']).toBe(true);
    expect(run['clock_skew_seconds']).toBeGreaterThanOrEqual(89);
    const metrics = await (await fetch(`${served.url}/metrics`)).text();
    expect(metrics).toMatch(/^cronix_report_clock_skewed_total\{job="shop\/nightly"\} 1$/m);
    expect(metrics).toMatch(
      /^cronix_report_host_clock_offset_seconds\{host="slow-clock"\} (89|9[01])$/m,
    );
  });

  it('refuses unsigned, wrongly signed, stale, malformed, unwatched and oversized reports with a JSON error, changing nothing', async () => {
    const before = (await runsOf('nightly')).length;
    const at = Date.now();
    const good = report('started', at, { job: 'nightly' });
    const cases: [string, Awaited<ReturnType<typeof sendReport>>, number, string][] = [
      ['unsigned', await sendReport(served.url, good, { secret: null }), 401, 'MissingSignature'],
      [
        'wrong secret',
        await sendReport(served.url, good, { secret: 'another-secret-0123456789' }),
        401,
        'SignatureMismatch',
      ],
      [
        'stale',
        await sendReport(served.url, good, { timestamp: Math.floor(at / 1000) - 600 }),
        401,
        'StaleTimestamp',
      ],
      [
        'garbage',
        await sendReport(served.url, null, { raw: '{"kind": started' }),
        400,
        'invalid_json',
      ],
      [
        'invalid',
        await sendReport(served.url, null, { raw: '{"kind":"started","run":{}}' }),
        400,
        'invalid_report',
      ],
      [
        'unwatched app',
        await sendReport(served.url, report('started', at, { app: 'other' })),
        404,
        'not_watched',
      ],
      [
        'unwatched job',
        await sendReport(served.url, report('started', at, { job: 'nope' })),
        404,
        'not_watched',
      ],
      [
        '10 MB',
        await sendReport(served.url, null, {
          raw: `{"kind":"started","pad":"${'x'.repeat(10_000_000)}"}`,
        }),
        413,
        'payload_too_large',
      ],
    ];
    for (const [what, res, status, code] of cases) {
      expect([what, res.status, (res.json['error'] as Run | undefined)?.['code']]).toEqual([
        what,
        status,
        code,
      ]);
      expect(typeof (res.json['error'] as Run)['message']).toBe('string');
    }
    expect((await runsOf('nightly')).length).toBe(before);
    expect((await sendReport(served.url, good)).status).toBe(200);
  });

  it('pings: the URL of cronix ping-url records a start and an end as one run; a retried ping changes nothing; a wrong token is refused', async () => {
    const out = cronix(
      [
        'ping-url',
        'shop/nightly',
        '--server',
        served.url,
        '--report-secret-ref',
        'env:REPORT_SECRET',
        '-o',
        'json',
      ],
      { env: { ...process.env, REPORT_SECRET } },
    );
    expect(out.status).toBe(0);
    const { url, start_url: startUrl } = JSON.parse(out.stdout) as {
      url: string;
      start_url: string;
    };
    const post = async (u: string) => {
      // a connection per ping: the synchronous `cronix` runs between them block this process
      // past the server's keep-alive timeout, and a reused socket it has closed fails the fetch
      const res = await fetch(u, { method: 'POST', headers: { connection: 'close' } });
      return { status: res.status, json: (await res.json()) as Run };
    };
    const s = await post(`${startUrl}&host=cron-box`);
    expect(s.status).toBe(200);
    expect(s.json).toMatchObject({
      result: 'recorded',
      run: { phase: 'running', host: 'cron-box' },
    });
    const id = (s.json['run'] as Run)['id'];
    const e = await post(`${url}&host=cron-box`);
    expect(e.json).toMatchObject({ result: 'ended', run: { id, outcome: 'success' } });
    expect((await post(`${url}&host=cron-box`)).json['result']).toBe('unchanged');
    // an exit code: a failed run of the every-second job, with its exit code
    const every = JSON.parse(
      cronix(
        [
          'ping-url',
          'shop/every',
          '--server',
          served.url,
          '--report-secret-ref',
          'env:REPORT_SECRET',
          '-o',
          'json',
        ],
        { env: { ...process.env, REPORT_SECRET } },
      ).stdout,
    ) as { url: string };
    // app.job names the same job (the form of `cronix trigger` and the spec files)
    const dotted = cronix(
      [
        'ping-url',
        'shop.every',
        '--server',
        served.url,
        '--report-secret-ref',
        'env:REPORT_SECRET',
      ],
      { env: { ...process.env, REPORT_SECRET } },
    );
    expect(dotted.status).toBe(0);
    expect(dotted.stdout).toContain(every.url);
    const failed = await post(every.url.replace('?', '/3?'));
    expect(failed.json).toMatchObject({
      result: 'recorded',
      run: { outcome: 'retries_exhausted', exit_code: 3, error: 'exit code 3' },
    });
    const wrong = await post(
      url.replace(/token=[0-9a-f]+/, 'token=0123456789abcdef0123456789abcdef'),
    );
    expect(wrong.status).toBe(401);
    expect((wrong.json['error'] as Run)['code']).toBe('invalid_ping_token');
    const other = await post(url.replace('/nightly?', '/every?'));
    expect(other.status).toBe(401);
    const unsigned = await post(`${served.url}/api/v1/ping/shop/nightly`);
    expect(unsigned.status).toBe(401);
  });

  it('an expected fire with no report becomes missed within grace + 5 s; a start with no end becomes crashed', async () => {
    const from = Date.now();
    const missed = await until(
      async () => (await runsOf('every')).find((r) => r['outcome'] === 'missed'),
      40_000,
      'a missed row',
    );
    expect(missed).toMatchObject({
      trigger: 'host',
      phase: 'ended',
      error: 'no report from any host within 10 s',
    });
    // recorded no later than its grace plus 5 s
    const late =
      Date.parse(missed['ended_at'] as string) - Date.parse(missed['scheduled_time'] as string);
    expect(late).toBeLessThanOrEqual(15_000 + 1_000);
    expect(late).toBeGreaterThanOrEqual(10_000);
    // the instants that were reported are not missed too (the earlier tests' reports and pings
    // may share an instant: their run keys are the fixtures', so count missed rows only)
    const rows = await runsOf('every');
    const reported = new Set(
      rows.filter((r) => r['outcome'] !== 'missed').map((r) => r['scheduled_time']),
    );
    const missedReported = rows.filter(
      (r) => r['outcome'] === 'missed' && reported.has(r['scheduled_time']),
    );
    expect(missedReported, JSON.stringify(missedReported, null, 1)).toEqual([]);
    const missedPerInstant = rows
      .filter((r) => r['outcome'] === 'missed')
      .map((r) => r['scheduled_time']);
    expect(new Set(missedPerInstant).size).toBe(missedPerInstant.length);
    // a start with no end: crashed after its worst case (1 s) plus the grace (10 s)
    const at = Math.floor(Date.now() / 1000) * 1000;
    const started = report('started', at, { job: 'nightly', host: 'db-1' });
    expect((await sendReport(served.url, started)).status).toBe(200);
    const crashed = await until(
      async () => {
        const r = (await api(served, 'GET', `/api/v1/runs/${started.run.id}`)).json;
        return r['outcome'] === 'crashed' ? r : undefined;
      },
      40_000,
      'the crashed run',
    );
    expect(crashed).toMatchObject({ error: 'no end report', host: 'db-1' });
    expect(Date.now() - from).toBeLessThan(60_000);
  }, 90_000);
});
