/**
 * The audit log (SPEC §18) on a real daemon (in-process, real HTTP server, real SQLite ledger)
 * driven through the API and through the built `cronix` CLI (real processes): every verb —
 * trigger, pause, resume, cancel, replay, token create and revoke — leaves one row naming who
 * (the token's name), what, which app/job/run, when, from where (`api`, `cli`) and how it
 * ended (ok, failed with the error, refused); `cronix tokens` and `cronix audit` work in both
 * output formats and never print a token's hash, nor its value after creation.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { hashToken } from '../../src/http/tokens.js';
import { cronixAsync } from '../helpers/cli.js';
import { until } from '../helpers/common.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: DaemonHandle;
let operator: string;
const env = { AUDIT_SECRET: 'audit-secret-0123456789abcd' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = { status: number; json: any };

async function api(token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await res.json() };
}

const admin = (): string => daemon.token as string;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const latest = async (q = ''): Promise<any> =>
  (await api(admin(), 'GET', `/api/v1/audit?limit=1${q}`)).json.audit[0];

beforeAll(async () => {
  // /slow answers after 3 s: long enough to cancel its run
  sink = await startSink((_, req) => ({
    status: 200,
    delayMs: req.url.startsWith('/slow') ? 3000 : 0,
  }));
  const dir = mkdtempSync(join(tmpdir(), 'cronix-audit-'));
  const job = (name: string) => ({
    name,
    schedule: '0 0 1 1 *',
    request: { url: `${sink.url}/${name}` },
    auth: { secret_refs: ['env:AUDIT_SECRET'] },
  });
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({ version: 1, app: 'shop', jobs: [job('a'), job('slow')] }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'm.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env,
  });
  const created = await api(admin(), 'POST', '/api/v1/tokens', { name: 'op', role: 'operator' });
  operator = created.json.token as string;
});
afterAll(async () => {
  await daemon.stop(1000);
  await sink.close();
});

describe('through the API', () => {
  it('each verb leaves one row: who, action, app/job/run, from api, the result', async () => {
    const before = (await api(admin(), 'GET', '/api/v1/audit?limit=1000')).json.audit.length;
    const t = await api(operator, 'POST', '/api/v1/jobs/shop/a/trigger');
    expect(t.status).toBe(202);
    const runId = t.json.run.id as string;
    expect(await latest()).toMatchObject({
      who: 'op',
      who_kind: 'token',
      role: 'operator',
      action: 'trigger',
      app: 'shop',
      job: 'a',
      run: runId,
      from: 'api',
      address: '127.0.0.1',
      replica: null,
      forwarded: false,
      result: 'ok',
      status: 202,
    });
    for (const verb of ['pause', 'resume'] as const) {
      expect((await api(operator, 'POST', `/api/v1/jobs/shop/a/${verb}`)).status).toBe(200);
      expect(await latest()).toMatchObject({ who: 'op', action: verb, app: 'shop', job: 'a' });
    }
    const slow = (await api(operator, 'POST', '/api/v1/jobs/shop/slow/trigger')).json.run.id;
    await until(
      async () =>
        (await api(admin(), 'GET', `/api/v1/runs/${slow}`)).json.phase === 'running' || undefined,
      15_000,
    );
    expect((await api(operator, 'POST', `/api/v1/runs/${slow}/cancel`)).status).toBe(200);
    expect(await latest()).toMatchObject({ action: 'cancel', run: slow, result: 'ok' });
    await until(
      async () =>
        (await api(admin(), 'GET', `/api/v1/runs/${runId}`)).json.phase === 'ended' || undefined,
      15_000,
    );
    const replay = await api(operator, 'POST', `/api/v1/runs/${runId}/replay`);
    expect(replay.status).toBe(202);
    expect(await latest()).toMatchObject({
      action: 'replay',
      run: runId,
      result: 'ok',
      status: 202,
    });
    // a verb that fails is recorded with its error; a read is not recorded
    expect((await api(operator, 'POST', '/api/v1/jobs/shop/nope/pause')).status).toBe(404);
    expect(await latest()).toMatchObject({
      action: 'pause',
      job: 'nope',
      result: 'failed',
      status: 404,
      detail: expect.stringContaining('nope'),
    });
    await api(operator, 'GET', '/api/v1/jobs');
    const after = (await api(admin(), 'GET', '/api/v1/audit?limit=1000')).json.audit.length;
    expect(after - before).toBe(7);
    // filters
    const pauses = (await api(admin(), 'GET', '/api/v1/audit?action=pause&app=shop')).json.audit;
    expect(pauses.map((r: { job: string }) => r.job)).toEqual(['nope', 'a']);
    const bad = await api(admin(), 'GET', '/api/v1/audit?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.json.error.path).toBe('since');
  });

  it('token creation and revocation are recorded with the token named, never its value', async () => {
    const created = await api(admin(), 'POST', '/api/v1/tokens', { name: 'tmp', role: 'viewer' });
    expect(await latest()).toMatchObject({
      who: 'default',
      action: 'token.create',
      result: 'ok',
      status: 201,
      detail: 'token "tmp" (viewer)',
    });
    await api(admin(), 'DELETE', '/api/v1/tokens/tmp');
    expect(await latest()).toMatchObject({ action: 'token.revoke', detail: 'token "tmp"' });
    const all = JSON.stringify((await api(admin(), 'GET', '/api/v1/audit?limit=1000')).json);
    expect(all).not.toContain(created.json.token as string);
    expect(all).not.toContain(daemon.token as string);
  });
});

describe('through the CLI', () => {
  const cli = (args: string[], token: string) =>
    cronixAsync([...args, '--url', daemon.url], {
      env: { PATH: process.env['PATH'] ?? '', CRONIX_TOKEN: token },
    });

  it('tokens create|list|revoke and a verb, recorded from cli; cronix audit shows them', async () => {
    const created = await cli(
      ['tokens', 'create', 'cli-op', '--role', 'operator', '--app', 'shop', '-o', 'json'],
      admin(),
    );
    expect(created.status, created.stderr).toBe(0);
    const json = JSON.parse(created.stdout) as { token: string; apps: string[]; role: string };
    expect(json).toMatchObject({ name: 'cli-op', role: 'operator', apps: ['shop'] });
    const paused = await cli(['pause', 'shop/a'], json.token);
    expect(paused.status, paused.stderr).toBe(0);
    const refused = await cli(['tokens', 'revoke', 'op'], json.token);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('needs the admin role');

    const list = await cli(['tokens', 'list'], admin());
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+ROLE\s+APPS\s+STATE/m);
    expect(list.stdout).toMatch(/^cli-op\s+operator\s+shop\s+active/m);
    expect(list.stdout).not.toContain(json.token);
    expect(list.stdout).not.toContain(hashToken(json.token));

    const audit = await cli(['audit', '--who', 'cli-op', '-o', 'json'], admin());
    expect(audit.status, audit.stderr).toBe(0);
    const rows = (JSON.parse(audit.stdout) as { audit: Record<string, unknown>[] }).audit;
    expect(rows[0]).toMatchObject({
      who: 'cli-op',
      action: 'token.revoke',
      result: 'refused',
      status: 403,
      from: 'cli',
    });
    expect(rows[1]).toMatchObject({
      who: 'cli-op',
      action: 'pause',
      app: 'shop',
      job: 'a',
      from: 'cli',
    });
    const created_ = (await api(admin(), 'GET', '/api/v1/audit?action=token.create&limit=1')).json;
    expect(created_.audit[0]).toMatchObject({ who: 'default', from: 'cli' });

    const revoked = await cli(['tokens', 'revoke', 'cli-op'], admin());
    expect(revoked.status).toBe(0);
    expect(revoked.stdout).toContain('token "cli-op" revoked at ');
    const after = await cli(['resume', 'shop/a'], json.token);
    expect(after.status).toBe(1);
    expect(after.stderr).toContain('401');

    const table = await cli(['audit', '--job', 'shop/a', '--limit', '5'], admin());
    expect(table.stdout).toMatch(/^AT\s+WHO\s+ACTION\s+TARGET\s+FROM\s+RESULT/m);
    expect(table.stdout).toMatch(/cli-op\s+pause\s+shop\/a\s+cli\s+ok 200/);
    const usage = await cli(['tokens', 'create', 'x', '--role', 'root'], admin());
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('--role must be one of viewer, operator, admin');
  });
});
