/**
 * `serve --watch` in-process (SPEC §15): what start-up refuses (an app both served and watched,
 * no report secret, a short one), the verbs refused on a watched job, a reload that adds a
 * watched job, the OpenAPI document, and a daemon without `--watch` answering reports 404.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServeError, startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { REPORT_SECRET, sendReport } from '../helpers/reports.js';
import { report } from './report-fixtures.js';

const job = (name: string) => ({
  name,
  schedule: '0 3 * * *',
  command: { argv: ['/bin/true'] },
});
const manifest = (app: string, names: string[]) =>
  JSON.stringify({ version: 1, app, jobs: names.map(job) });

let daemon: DaemonHandle | null = null;
afterEach(async () => {
  await daemon?.stop(200);
  daemon = null;
});

function setup(): { dir: string; watch: string; served: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-watch-api-'));
  const watch = join(dir, 'watch.json');
  const served = join(dir, 'served.json');
  writeFileSync(watch, manifest('ops', ['backup']));
  writeFileSync(served, manifest('web', ['sweep']));
  return { dir, watch, served };
}

const start = (dir: string, o: Partial<Parameters<typeof startDaemon>[0]>) =>
  startDaemon({
    manifests: [],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    noAuth: true,
    env: { REPORT_SECRET, SHORT: 'short' },
    ...o,
  });

describe('serve --watch (in-process)', () => {
  it('refuses an app both served and watched, a watch without a report secret, and a short secret', async () => {
    const { dir, watch } = setup();
    const both = join(dir, 'both.json');
    writeFileSync(both, manifest('ops', ['other']));
    await expect(
      start(dir, { manifests: [both], watch: [watch], reportSecretRefs: ['env:REPORT_SECRET'] }),
    ).rejects.toThrow(/app "ops" is both served .* and watched/);
    await expect(start(dir, { watch: [watch] })).rejects.toThrow(
      /--watch needs --report-secret-ref REF/,
    );
    const short = start(dir, { watch: [watch], reportSecretRefs: ['env:SHORT'] });
    await expect(short).rejects.toThrow(ServeError);
    await expect(short).rejects.toThrow(/--report-secret-ref: secret too short: env:SHORT/);
    await expect(start(dir, { watch: [watch], reportSecretRefs: ['env:NOPE'] })).rejects.toThrow(
      /--report-secret-ref env:NOPE: env var NOPE is not set/,
    );
  });

  it('lists watched beside served jobs, refuses their verbs, reloads them, documents the routes', async () => {
    const { dir, watch, served } = setup();
    daemon = await start(dir, {
      manifests: [served],
      watch: [watch],
      reportSecretRefs: ['env:REPORT_SECRET'],
    });
    const get = async (path: string) => (await fetch(`${daemon!.url}${path}`)).json();
    const jobs = (await get('/api/v1/jobs')) as { jobs: Record<string, unknown>[] };
    expect(jobs.jobs.map((j) => [j['app'], j['job'], j['fired_by'], j['last_report']])).toEqual([
      ['ops', 'backup', 'host', null],
      ['web', 'sweep', 'daemon', undefined],
    ]);
    for (const verb of ['trigger', 'pause', 'resume']) {
      const res = await fetch(`${daemon.url}/api/v1/jobs/ops/backup/${verb}`, { method: 'POST' });
      expect([verb, res.status]).toEqual([verb, 409]);
    }
    writeFileSync(watch, manifest('ops', ['backup', 'audit']));
    expect(await daemon.reload()).toEqual({ ok: true, jobs: 3 });
    const after = (await get('/api/v1/jobs')) as { jobs: Record<string, unknown>[] };
    expect(after.jobs.map((j) => `${j['app']}/${j['job']}`)).toContain('ops/audit');
    const at = Date.now();
    const r = report('started', at, {
      app: 'ops',
      job: 'audit',
      runKey: `ops/audit#${new Date(at).toISOString()}#x`,
    });
    expect((await sendReport(daemon.url, r)).status).toBe(200);
    const doc = (await get('/openapi.json')) as {
      paths: Record<string, Record<string, { security: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.paths['/api/v1/reports']?.['post']?.security).toEqual([{ signature: [] }]);
    expect(Object.keys(doc.paths)).toContain('/api/v1/ping/{app}/{job}/start');
    expect(doc.components.schemas['ReportedRun']).toBeDefined();
  });

  it('a daemon without --watch answers reports 404 not_watching', async () => {
    const { dir, served } = setup();
    daemon = await start(dir, { manifests: [served] });
    const res = await sendReport(daemon.url, report('started', Date.now()));
    expect(res.status).toBe(404);
    expect((res.json['error'] as Record<string, unknown>)['code']).toBe('not_watching');
  });
});
