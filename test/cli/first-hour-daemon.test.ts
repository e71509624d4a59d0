/**
 * The first hour with the daemon, tried as a new user would (issue "The first hour", items 8, 9,
 * 10, 15): jobs are named app/job (app.job works too) and printed app/job; `runs --outcome
 * failed` and the UI's names; `start --after 1h30m` and a clear `--at` error; `cancel` without a
 * meaningless admission column; a paused job shows `paused`, not a next fire. Runs the built
 * binary (`npm run build` first) against a daemon in this process.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWhen } from '../../src/cli/commands/client.js';
import { parseOutcomes } from '../../src/daemon/store/outcomes.js';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { cronixAsync } from '../helpers/cli.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;
let env: NodeJS.ProcessEnv;
const cronix = (args: string[]) => cronixAsync(args, { env });
const api = async (path: string): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${daemon.url}${path}`, {
    headers: { authorization: `Bearer ${daemon.token}` },
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};
type Run = { id: string; app: string; job: string; outcome: string | null };
const runsOf = async (query: string): Promise<Run[]> =>
  (await api(`/api/v1/runs?${query}`)).json['runs'] as Run[];

beforeAll(async () => {
  sink = await startSink((_, req) =>
    req.url.startsWith('/ok') ? { status: 200, body: 'ok' } : { status: 503, body: 'down' },
  );
  const dir = mkdtempSync(join(tmpdir(), 'cronix-first-hour-daemon-'));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: ['ok', 'bill', 'later'].map((name) => ({
        name,
        schedule: '0 0 1 1 *',
        request: { url: `${sink.url}/${name}` },
        policy: { retries: { max_attempts: 1 } },
        auth: { secret_refs: ['env:APP_SECRET'] },
      })),
    }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { APP_SECRET: 'app-secret-0123456789' },
  });
  env = { ...process.env, CRONIX_URL: daemon.url, CRONIX_TOKEN: daemon.token ?? '' };
});

afterAll(async () => {
  await daemon?.stop(1000);
  await sink?.close();
});

describe('jobs are named app/job, and app.job works too', () => {
  it('start takes both forms and prints app/job', async () => {
    for (const name of ['shop/ok', 'shop.ok']) {
      const r = await cronix(['start', name]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^ID\s+JOB\s+ADMISSION/);
      expect(r.stdout).toMatch(/\sshop\/ok\s+started\s/);
    }
    await cronix(['start', 'shop/bill']);
    await until(async () =>
      (await runsOf('app=shop&phase=ended')).length >= 3 ? true : undefined,
    );
  });

  it('runs --job, pause and resume take app/job; a bad name is a usage error saying both forms', async () => {
    const runs = await cronix(['runs', '--job', 'shop/bill']);
    expect(runs.status).toBe(0);
    const rows = runs.stdout.trim().split('\n').slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    for (const row of rows) expect(row).toMatch(/\sshop\/bill\s/);
    const paused = await cronix(['pause', 'shop/later']);
    expect(paused.stdout).toMatch(/^JOB\s+PAUSED\nshop\/later\s+true$/m);
    const resumed = await cronix(['resume', 'shop.later']);
    expect(resumed.stdout).toMatch(/^shop\/later\s+false$/m);
    for (const args of [
      ['start', 'shop_ok'],
      ['runs', '--job', 'shop'],
    ]) {
      const bad = await cronix(args);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/must name a job as app\/job \(or app\.job\), found "shop(_ok)?"/);
    }
  });
});

describe('runs --outcome: failed, lists and the UI names', () => {
  it('parseOutcomes: outcomes, the failed group, the UI spelling, lists', () => {
    expect(parseOutcomes('failed')).toEqual({
      ok: true,
      outcomes: ['app_rejected', 'retries_exhausted', 'crashed', 'internal_error'],
    });
    expect(parseOutcomes('app rejected, Retries-Exhausted')).toEqual({
      ok: true,
      outcomes: ['app_rejected', 'retries_exhausted'],
    });
    expect(parseOutcomes('failing')).toEqual(parseOutcomes('failed'));
    expect(parseOutcomes('success,bogus')).toEqual({ ok: false, unknown: 'bogus' });
  });

  it('cronix runs --outcome failed lists the failed run and not the successes', async () => {
    const r = await cronix(['runs', '--outcome', 'failed', '-o', 'json']);
    expect(r.status).toBe(0);
    const runs = (JSON.parse(r.stdout) as { runs: Run[] }).runs;
    expect(runs.length).toBeGreaterThanOrEqual(1);
    for (const run of runs) expect(run.outcome).toBe('retries_exhausted');
    const ui = await cronix(['runs', '--outcome', 'retries exhausted,success']);
    expect(ui.status).toBe(0);
    expect(ui.stdout).toMatch(/\sshop\/bill\s.*retries_exhausted/);
    expect(ui.stdout).toMatch(/\sshop\/ok\s.*success/);
  });

  it('the API takes ?outcome=failed and lists, and names a bad one', async () => {
    const failed = await runsOf('outcome=failed');
    expect(failed.map((x) => x.job)).toEqual(failed.map(() => 'bill'));
    const both = await runsOf('outcome=success,retries_exhausted');
    expect(new Set(both.map((x) => x.job))).toEqual(new Set(['ok', 'bill']));
    const bad = await api('/api/v1/runs?outcome=success,nope');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toMatch(/or failed \(app_rejected.*found \\"nope\\"/);
  });
});

describe('start --after and --at', () => {
  it('durations as @every writes them, plain seconds, and the limit', () => {
    expect(startWhen({ after: '1h30m' })).toEqual({ body: { after_seconds: 5400 } });
    expect(startWhen({ after: '90' })).toEqual({ body: { after_seconds: 90 } });
    expect(startWhen({ after: '2h5s' })).toEqual({ body: { after_seconds: 7205 } });
    expect(startWhen({ at: '1767225600' })).toEqual({ body: { at: '2026-01-01T00:00:00Z' } });
    expect(startWhen({ after: '400d' })).toHaveProperty('error');
  });

  it('start --after 1h30m schedules a run; cancel prints it without an admission column', async () => {
    const r = await cronix(['start', 'shop/later', '--after', '1h30m', '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const started = JSON.parse(r.stdout) as { run: { id: string }; admission: string };
    expect(started.admission).toBe('scheduled');
    const c = await cronix(['cancel', started.run.id]);
    expect(c.status).toBe(0);
    const [head, row] = c.stdout.trim().split('\n');
    expect(head).toMatch(/^ID\s+JOB\s+PHASE\s+OUTCOME\s+ERROR$/);
    expect(head).not.toMatch(/ADMISSION/);
    expect(row).toMatch(/\sshop\/later\s+ended\s+stopped\s+cancelled$/);
  });

  it('--at tomorrow says which formats are accepted, before calling the daemon', async () => {
    const r = await cronix(['start', 'shop/later', '--at', 'tomorrow']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'error: --at: expected an RFC 3339 instant such as 2026-03-08T07:00:00Z (or Unix seconds), found "tomorrow"; for a delay use --after 1h30m\n',
    );
    const after = await cronix(['start', 'shop/later', '--after', 'soon']);
    expect(after.status).toBe(2);
    expect(after.stderr).toMatch(/--after: expected a delay like 90s, 5m, 1h30m or 2h/);
  });
});

describe('a paused job', () => {
  it('shows paused instead of a next fire; the API has next_fire null', async () => {
    await cronix(['pause', 'shop/later']);
    try {
      const jobs = (await api('/api/v1/jobs')).json['jobs'] as Record<string, unknown>[];
      const later = jobs.find((j) => j['job'] === 'later');
      expect(later).toMatchObject({ paused: true, next_fire: null });
      expect(jobs.find((j) => j['job'] === 'ok')?.['next_fire']).toMatch(/^\d{4}-/);
      const r = await cronix(['jobs']);
      expect(r.stdout).toMatch(/^JOB\s+SCHEDULES\s+TIMEZONE\s+NEXT_FIRE\s+PAUSED/);
      expect(r.stdout).toMatch(/^shop\/later\s+0 0 1 1 \*\s+UTC\s+paused\s+true\s/m);
      expect(r.stdout).toMatch(/^shop\/ok\s+0 0 1 1 \*\s+UTC\s+\d{4}-\S+Z\s+false\s/m);
    } finally {
      await cronix(['resume', 'shop/later']);
    }
  });
});
