/**
 * The first hour, tried as a new user would (import items): `wget`/`curl` lines whose URL has an
 * unquoted query string become HTTP jobs with the query kept (the `?` is not a glob there), and
 * imported command jobs get the command limit of a day without a warning about it. CLI cases run
 * the built binary (`npm run build` first).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { importCrontab } from '../../src/import/crontab-import.js';
import { splitShellWords } from '../../src/import/shell-words.js';
import { cronixAsync, workspace } from '../reconcile/cli-helpers.js';

type AnyJob = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CRONTAB = [
  '0 6 * * * wget -qO- https://host.example/run?kind=daily',
  '5 6 * * * curl -fsS https://host.example/api/sync?full=1&dry=0 >/dev/null 2>&1',
  '10 6 * * * curl -fsS -X POST https://host.example/api/report?format=csv',
  '15 6 * * * /usr/local/bin/backup --full',
  '20 6 * * * ls /tmp/*.log',
  '',
].join('\n');

describe('URLs with query strings', () => {
  const result = importCrontab(CRONTAB, { app: 'ops', system: false, hostZone: 'UTC' });
  const jobs = result.manifest.jobs as AnyJob[];

  it('wget and curl with an unquoted "?" become HTTP jobs keeping the query', () => {
    expect(jobs[0]?.['request']).toMatchObject({
      method: 'GET',
      url: 'https://host.example/run?kind=daily',
    });
    expect(jobs[2]?.['request']).toMatchObject({
      method: 'POST',
      url: 'https://host.example/api/report?format=csv',
    });
    expect(result.verdicts[0]?.message).toMatch(
      /^HTTP job run \(GET https:\/\/host\.example\/run\?kind=daily\)/,
    );
  });

  it('an unquoted "&" is still the shell (cron ran it in the background): a command job', () => {
    expect(jobs[1]?.['command']?.['argv']?.[0]).toBe('/bin/sh');
  });

  it('a glob outside a URL still needs the shell', () => {
    expect(jobs[4]?.['command']?.['argv']).toEqual(['/bin/sh', '-c', 'ls /tmp/*.log']);
    expect(splitShellWords('wget -qO- https://h/x?a=1').needsShell).toBe(false);
    expect(splitShellWords('rm /tmp/x?').needsShell).toBe(true);
    expect(splitShellWords('echo https://h/x?a=1 foo*').needsShell).toBe(true);
  });

  it('the manifest is valid', () => {
    expect(parseManifest(result.manifest).ok).toBe(true);
  });
});

describe('timeout of imported jobs', () => {
  const result = importCrontab(CRONTAB, { app: 'ops', system: false, hostZone: 'UTC' });
  const jobs = result.manifest.jobs as AnyJob[];

  it('a command job gets the command limit (a day), and no warning about it', () => {
    expect(jobs[3]?.['policy']?.['timeout_seconds']).toBe(86_400);
    for (const v of result.verdicts) expect(v.message).not.toMatch(/timeout_seconds/);
  });

  it('an HTTP job keeps the HTTP limit (600 s)', () => {
    expect(jobs[0]?.['policy']?.['timeout_seconds']).toBe(600);
  });
});

describe('cronix import crontab', () => {
  it('prints an HTTP job for a wget line with a query string', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'crontab');
    writeFileSync(file, CRONTAB);
    const r = await cronixAsync(['import', 'crontab', file, '--app', 'ops', '-o', 'json']);
    expect(r.status).toBe(0);
    const manifest = JSON.parse(r.stdout) as { jobs: AnyJob[] };
    expect(manifest.jobs[0]?.['request']?.['url']).toBe('https://host.example/run?kind=daily');
    expect(r.stderr).toMatch(/HTTP job run \(GET https:\/\/host\.example\/run\?kind=daily\)/);
    expect(r.stderr).not.toMatch(/timeout_seconds 600/);
  });
});
