/**
 * `cronix import crontab` (SPEC §14): realistic user and system crontabs (fixtures/), every
 * mapping and refusal, and the printed manifest accepted by `cronix validate` and by `plan`.
 * The CLI cases run the built binary (`npm run build` first).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { importCrontab } from '../../src/import/crontab-import.js';
import { cronixAsync, workspace } from '../reconcile/cli-helpers.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const USER = readFileSync(join(FIXTURES, 'user.crontab'), 'utf8');
const SYSTEM = readFileSync(join(FIXTURES, 'system.crontab'), 'utf8');

type AnyJob = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const user = importCrontab(USER, { app: 'ops', system: false, hostZone: 'UTC' });
const jobs = user.manifest.jobs as AnyJob[];
const job = (name: string): AnyJob => jobs.find((j) => j['name'] === name) as AnyJob;
const verdict = (line: number) => user.verdicts.find((v) => v.line === line);

describe('import crontab: user format', () => {
  it('the result is a valid manifest', () => {
    const r = parseManifest(user.manifest);
    expect(r.ok).toBe(true);
    expect(jobs.map((j) => j['name'])).toEqual([
      'backup',
      'settle-invoices',
      'heartbeat',
      'report',
      'echo',
      'mysql',
      'date',
      'ping',
    ]);
  });

  it('curl → HTTP job with method, headers and body from its flags', () => {
    expect(job('settle-invoices')['request']).toEqual({
      method: 'POST',
      url: 'https://billing.internal/api/v1/scheduled/settle-invoices',
      headers: { Authorization: 'Bearer abc', 'Content-Type': 'application/json' },
      body: '{"source":"cron"}',
    });
  });

  it('wget → HTTP job; --timeout becomes timeout_seconds', () => {
    expect(job('heartbeat')['request']).toMatchObject({
      method: 'GET',
      url: 'https://status.example.com/heartbeat',
    });
    expect(job('heartbeat')['policy']['timeout_seconds']).toBe(30);
    expect(verdict(11)?.message).toMatch(/wget retried network errors up to 20 times/);
  });

  it('other commands → command jobs: plain words as argv, shell syntax through $SHELL -c', () => {
    expect(job('backup')['command']['argv']).toEqual([
      '/usr/local/bin/backup',
      '--full',
      '--target',
      '/srv/backups',
    ]);
    expect(job('report')['command']['argv']).toEqual([
      '/bin/bash',
      '-c',
      '/usr/local/bin/report.sh | mail -s report team@example.com',
    ]);
    // \% is cron's literal percent
    expect(job('date')['command']['argv']).toEqual(['/usr/bin/date', '+%Y-%m']);
  });

  it('a curl flag without an HTTP-job equivalent keeps the line a command job, naming the flag', () => {
    expect(job('ping')['command']['argv']).toEqual([
      'curl',
      '--insecure',
      'https://legacy.example.com/ping',
    ]);
    expect(verdict(19)?.message).toMatch(/curl flag --insecure has no HTTP-job equivalent/);
  });

  it('VAR=value → env of the command jobs below; MAILTO → a note; SHELL decides the -c shell', () => {
    expect(job('backup')['command']['env']).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      DB_HOST: 'db.internal',
    });
    expect(verdict(2)).toMatchObject({ verdict: 'note' });
    expect(verdict(2)?.message).toMatch(/MAILTO=ops@example.com: cron mailed/);
    expect(verdict(3)).toMatchObject({ verdict: 'env' });
  });

  it('CRON_TZ → timezone of the jobs below; jobs above it follow the cron daemon zone', () => {
    expect(job('backup')['timezone']).toBe('UTC');
    expect(job('report')['timezone']).toBe('Europe/Berlin');
    expect(verdict(12)).toMatchObject({ verdict: 'timezone' });
  });

  it('comments directly above a job → description', () => {
    expect(job('backup')['description']).toBe('Nightly database backup keeps 7 days');
    expect(verdict(7)).toMatchObject({ verdict: 'description', job: 'backup' });
    expect(verdict(1)).toMatchObject({ verdict: 'ignored' });
  });

  it('@reboot and % stdin are refused with the reason', () => {
    expect(verdict(14)).toMatchObject({ verdict: 'refused' });
    expect(verdict(14)?.message).toMatch(/@reboot runs once at boot/);
    expect(verdict(17)).toMatchObject({ verdict: 'refused' });
    expect(verdict(17)?.message).toMatch(/"%", which cron turns into standard input/);
  });

  it('defaults reproduce cron: Allow, no catch-up, one attempt', () => {
    for (const j of jobs) {
      expect(j['policy']).toMatchObject({
        concurrency: 'Allow',
        retries: { max_attempts: 1 },
        catchup: { mode: 'none' },
      });
    }
  });

  it('a bad schedule or zone is refused naming the value', () => {
    const r = importCrontab('CRON_TZ=Mars/Olympus\n61 * * * * /bin/true\n* * * * * /bin/true\n', {
      app: 'x',
      system: false,
      hostZone: 'UTC',
    });
    expect(r.verdicts[0]).toMatchObject({ verdict: 'refused' });
    expect(r.verdicts[0]?.message).toMatch(/CRON_TZ=Mars\/Olympus/);
    expect(r.verdicts[1]).toMatchObject({ verdict: 'refused' });
    expect(r.verdicts[1]?.message).toMatch(/schedule "61 \* \* \* \*"/);
    expect(r.manifest.jobs).toHaveLength(1);
  });
});

describe('import crontab: system format', () => {
  const sys = importCrontab(SYSTEM, { app: 'etc', system: true, hostZone: 'UTC' });
  const sj = sys.manifest.jobs as AnyJob[];

  it('skips the user field, notes non-root users, and TZ sets the timezone', () => {
    expect(parseManifest(sys.manifest).ok).toBe(true);
    expect(sj.map((j) => j['name'])).toEqual(['cd', 'artisan', 'poll']);
    expect(sj[0]?.['command']['argv']).toEqual([
      '/bin/sh',
      '-c',
      'cd / && run-parts --report /etc/cron.hourly',
    ]);
    expect(sj[0]?.['description']).toBe('rotate application logs');
    expect(sj[1]?.['command']['argv']).toEqual([
      '/usr/bin/php',
      '/var/www/app/artisan',
      'schedule:run',
    ]);
    expect(sj.every((j) => j['timezone'] === 'America/New_York')).toBe(true);
    const artisan = sys.verdicts.find((v) => v.job === 'artisan' && v.verdict === 'job');
    expect(artisan?.message).toMatch(/ran as user www-data/);
    expect(sj[2]?.['request']).toMatchObject({
      method: 'GET',
      url: 'https://deploy.internal/api/poll',
    });
    expect(sys.verdicts.find((v) => v.line === 10)).toMatchObject({ verdict: 'refused' });
  });
});

describe('cronix import crontab (CLI)', () => {
  it('prints a manifest that validate and plan accept, verdicts and the cron warning on stderr', async () => {
    const ws = workspace();
    const r = await cronixAsync([
      'import',
      'crontab',
      join(FIXTURES, 'user.crontab'),
      '--app',
      'ops',
      '--cron-timezone',
      'UTC',
      '--secret-ref',
      'file:/etc/cronix/secrets/cron-secret',
    ]);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^line 14: refused: @reboot/m);
    expect(r.stderr).toMatch(
      /warning: cron keeps running the imported lines \(9, 10, 11, 13, 15, 16, 18, 19/,
    );
    const path = ws.manifest(r.stdout, 'imported.json');
    const v = await cronixAsync(['validate', path]);
    expect(v.status).toBe(0);
    // Debian's cron ignores CRON_TZ, so the crontab backend refuses the Europe/Berlin jobs (the
    // unit tests cover that mapping): plan the same crontab without its CRON_TZ line
    const utcFile = join(ws.dir, 'user-utc.crontab');
    writeFileSync(utcFile, USER.replace(/^CRON_TZ=.*\n/m, ''));
    const utc = await cronixAsync([
      'import',
      'crontab',
      utcFile,
      '--app',
      'ops',
      '--cron-timezone',
      'UTC',
      '--secret-ref',
      'file:/etc/cronix/secrets/cron-secret',
    ]);
    const plan = await cronixAsync([
      'plan',
      ws.manifest(utc.stdout, 'utc.json'),
      ...ws.flags,
      '-o',
      'json',
    ]);
    expect(plan.stderr).toBe('');
    expect(plan.status).toBe(0);
    const p = JSON.parse(plan.stdout) as { summary: Record<string, number> };
    expect(p.summary).toMatchObject({ create: 8, refused: 0 });
  });

  it('-o json gives one JSON verdict per line; system format from --system and stdin via a file', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'cronfile');
    writeFileSync(file, SYSTEM);
    const r = await cronixAsync([
      'import',
      'crontab',
      file,
      '--system',
      '-o',
      'json',
      '--cron-timezone',
      'UTC',
    ]);
    expect(r.status).toBe(0);
    const lines = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l['verdict'] === 'job')).toHaveLength(3);
    expect(lines.at(-1)).toMatchObject({ level: 'warning' });
    expect((JSON.parse(r.stdout) as { app: string }).app).toBe('cronfile');
    // without its TZ line every job is UTC: the crontab backend plans it as it is
    writeFileSync(file, SYSTEM.replace(/^TZ=.*\n/m, ''));
    const utc = await cronixAsync([
      'import',
      'crontab',
      file,
      '--system',
      '--cron-timezone',
      'UTC',
      '--secret-ref',
      'file:/etc/cronix/secrets/cron-secret',
    ]);
    const path = ws.manifest(utc.stdout, 'system.json');
    const plan = await cronixAsync(['plan', path, ...ws.flags, '-o', 'json']);
    expect(plan.status).toBe(0);
    expect((JSON.parse(plan.stdout) as { summary: Record<string, number> }).summary).toMatchObject({
      create: 3,
      refused: 0,
    });
  });

  it('bad input: a bad --app is a usage error naming the flag; an unreadable file and nothing importable exit 1', async () => {
    const ws = workspace();
    const bad = await cronixAsync([
      'import',
      'crontab',
      join(FIXTURES, 'user.crontab'),
      '--app',
      'Bad_App',
    ]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--app "Bad_App" is not an app name/);
    const missing = await cronixAsync(['import', 'crontab', join(ws.dir, 'nope')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/cannot read crontab .*nope: ENOENT/);
    const empty = join(ws.dir, 'only-reboot');
    writeFileSync(empty, '@reboot /bin/true\n');
    const none = await cronixAsync(['import', 'crontab', empty]);
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/no line of .* could be imported/);
    expect(none.stdout).toBe('');
    const big = join(ws.dir, 'big');
    writeFileSync(
      big,
      Array.from({ length: 300 }, (_, i) => `${i % 60} * * * * /bin/t${i}\n`).join(''),
    );
    const tooMany = await cronixAsync(['import', 'crontab', big, '--cron-timezone', 'UTC']);
    expect(tooMany.status).toBe(1);
    expect(tooMany.stderr).toMatch(
      /has 300 importable lines, but a manifest holds at most 256 jobs; split the crontab/,
    );
    expect(tooMany.stderr).not.toMatch(/internal error/);
  });
});
