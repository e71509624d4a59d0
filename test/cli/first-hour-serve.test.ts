/**
 * The first hour with `cronix serve` as a process (issue "The first hour", items 12, 15, 17):
 * `cronix reload` finds the daemon of a data dir and sends it SIGHUP, and refuses clearly when
 * none runs (never signalling a pid left in a stale holder file); a reload refused for a job
 * without `auth.secret_refs` names the manifest file and the field; a global-scope job without
 * Redis is named by `serve`, with the flag to pass, and `validate` warns about it beforehand.
 * Runs the built binary (`npm run build` first).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveHolder } from '../../src/daemon/serve-holder.js';
import { cronix, cronixAsync, REPO_ROOT } from '../helpers/cli.js';
import {
  manifestDir,
  spawnServe,
  TEST_SECRET,
  until,
  writeManifest,
  type Served,
} from '../helpers/serve.js';
import { freePort } from '../helpers/sink.js';

const job = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  schedule: '0 0 1 1 *',
  request: { url: `http://127.0.0.1:9/${name}` },
  ...extra,
});

const daemons: Served[] = [];
afterAll(() => {
  for (const d of daemons) d.child.kill('SIGKILL');
});

describe('the start-up line says where the UI and the token are', () => {
  it('listening: the UI URL and the token file, in the message and as fields', async () => {
    const dir = manifestDir('shop', [job('a')]);
    const port = await freePort();
    const d = await spawnServe(dir, port);
    daemons.push(d);
    const line = d
      .output()
      .split('\n')
      .find((l) => l.includes('"event":"listening"'));
    const logged = JSON.parse(line as string) as Record<string, unknown>;
    const tokenFile = join(dir, 'data', 'token');
    expect(logged).toMatchObject({
      ui: `http://127.0.0.1:${port}/`,
      token_file: tokenFile,
      auth: true,
    });
    expect(logged['msg']).toBe(
      `cronix serving 1 job(s) on http://127.0.0.1:${port}; web UI http://127.0.0.1:${port}/ (log in with the token in ${tokenFile})`,
    );
    d.child.kill('SIGTERM');
    await d.exited;
  });
});

describe('cronix reload', () => {
  it('sends SIGHUP to the daemon of the data dir; a refused reload names the file and the field', async () => {
    const dir = manifestDir('shop', [job('a')]);
    const d = await spawnServe(dir);
    daemons.push(d);
    const dataDir = join(dir, 'data');
    writeManifest(dir, 'shop', [job('a'), job('b')]);
    const r = await cronixAsync(['reload', '--data-dir', dataDir]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^sent SIGHUP to cronix serve \\(pid ${d.child.pid}, `));
    await until(() => (d.output().includes('"event":"reloaded"') ? true : undefined));
    expect(d.output()).toMatch(/manifests reloaded: 2 job\(s\)/);

    // a job without auth.secret_refs, written third in the file (jobs are sorted when loaded)
    const file = join(dir, 'manifest.json');
    const m = JSON.parse(readFileSync(file, 'utf8')) as { jobs: Record<string, unknown>[] };
    m.jobs.push(job('aaa-unsigned', { auth: { secret_refs: [] } }));
    writeFileSync(file, JSON.stringify(m));
    expect((await cronixAsync(['reload', '--data-dir', dataDir, '-o', 'json'])).status).toBe(0);
    const line = await until(() =>
      d
        .output()
        .split('\n')
        .find((l) => l.includes('"event":"reload-failed"')),
    );
    const logged = JSON.parse(line) as Record<string, unknown>;
    expect(logged).toMatchObject({ file, path: 'jobs/2/auth/secret_refs' });
    expect(logged['msg']).toMatch(
      /manifest\.json: jobs\/2\/auth\/secret_refs: job shop\/aaa-unsigned: no auth\.secret_refs/,
    );
  });

  it('no daemon: exit 1 naming the data dir, whether it never ran or left a stale holder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-first-hour-reload-'));
    const never = cronix(['reload', '--data-dir', join(dir, 'nothing')]);
    expect(never.status).toBe(1);
    expect(never.stderr).toMatch(
      /^error: no cronix serve runs on data dir .*nothing: .*serve\.lock does not exist/,
    );
    // a daemon killed with SIGKILL leaves its holder file; its pid may be anyone's now — here,
    // this test process's, which a SIGHUP would end
    const stale = join(dir, 'stale');
    mkdirSync(stale);
    writeFileSync(join(stale, 'serve.lock'), '');
    writeFileSync(
      join(stale, 'serve.holder'),
      JSON.stringify({ pid: process.pid, host: hostname(), acquired_at: new Date().toISOString() }),
    );
    const r = cronix(['reload', '--data-dir', stale], {
      env: { ...process.env, CRONIX_HOST_ID: '' },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /no cronix serve runs on data dir .*stale: its last daemon \(pid \d+\)/,
    );
    // the same answer when /proc/locks cannot be read (the lock is tried instead)
    expect(await serveHolder(stale, null)).toMatchObject({ ok: false });
  });
});

describe('concurrency_scope global without Redis', () => {
  const manifest = {
    version: 1,
    app: 'billing-service',
    jobs: [
      job('settle-invoices', {
        policy: { concurrency: 'Forbid', concurrency_scope: 'global' },
        auth: { secret_refs: ['env:CRON_SECRET'] },
      }),
    ],
  };

  it('serve names the job and what to pass; validate warns beforehand', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-first-hour-global-'));
    const file = join(dir, 'manifest.json');
    writeFileSync(file, JSON.stringify(manifest));
    const validate = cronix(['validate', file]);
    expect(validate.status).toBe(0);
    expect(validate.stderr).toMatch(
      /^warning: job settle-invoices: concurrency_scope global takes a Redis lock .*--lock-backend redis:\/\/host:6379 \(or CRONIX_REDIS_URL\)/m,
    );
    const { CRONIX_REDIS_URL: _, ...rest } = process.env;
    const serve = cronix(
      ['serve', file, '--data-dir', join(dir, 'data'), '--listen', `127.0.0.1:${await freePort()}`],
      { env: { ...rest, CRON_SECRET: TEST_SECRET } },
    );
    expect(serve.status).toBe(1);
    expect(serve.stderr).toBe(
      'error: job billing-service/settle-invoices has concurrency_scope global, which takes a Redis lock shared by every daemon and host: start cronix serve with --lock-backend redis://host:6379 (or set CRONIX_REDIS_URL), or set policy.concurrency_scope to "host" (the default) when one daemon runs the job\n',
    );
  });

  it("the README's own manifest (Quickstart step 3) validates without that warning, and serves as written", async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const block = /3\. Write your own manifest[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'cronix-first-hour-readme-'));
    const file = join(dir, 'my-jobs.json');
    writeFileSync(file, (block as string).replace(/^ {3}/gm, ''));
    const r = cronix(['validate', file]);
    expect(r.status).toBe(0);
    expect(r.stderr).not.toMatch(/concurrency_scope global/);
    // `CRON_SECRET=dev-secret-change-me npx cronix serve my-jobs.json`, as step 3 says
    const served = await spawnServe(dir, 0, {
      manifests: [file],
      env: { PATH: process.env['PATH'], CRON_SECRET: 'dev-secret-change-me' },
    });
    daemons.push(served);
    const jobs = cronix(['jobs', '--url', served.url, '--token-file', join(dir, 'data', 'token')]);
    expect(jobs.status).toBe(0);
    expect(jobs.stdout).toContain('billing-service/settle-invoices');
  });
});
