/**
 * Calendars (SPEC §16) through the API and the built CLI, on a real daemon (in-process, real
 * HTTP server, SQLite ledger, manifests and a holiday file read from disk):
 * `POST /api/v1/jobs/{app}/{job}/skip` with `{"next": true}` or `{"at": T}` (201, then 200 for
 * the same instant), its refusals (400 naming the field, 404, 409), its roles (operator of the
 * app; a viewer or an operator of another app is refused 403) and its audit row; the job view's
 * `skips` and `blackout` (a holiday file's name, never its dates); `cronix skip` in both output
 * formats with its exit codes; `cronix validate` naming a bad line of a holiday file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextFires } from '../../src/contract/schedule/index.js';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { cronix, cronixAsync } from '../helpers/cli.js';

let daemon: DaemonHandle;
let dir: string;
const tokens: Record<string, string> = {};
const env = { SKIP_SECRET: 'skip-secret-0123456789abcdef' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = { status: number; json: any };

async function api(token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${daemon.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await res.json() };
}

const admin = (): string => daemon.token as string;
const HOURLY = '17 * * * *';
const iso = (d: Date): string => d.toISOString().replace('.000Z', 'Z');
const fires = (n: number): string[] =>
  nextFires(HOURLY, { from: Date.now(), count: n, timezone: 'UTC' }).map(iso);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cronix-skip-'));
  writeFileSync(join(dir, 'holidays.txt'), '# company days\n2031-12-24\n2031-12-31\n');
  const job = (name: string, policy: Record<string, unknown> = {}) => ({
    name,
    schedule: HOURLY,
    request: { url: 'http://127.0.0.1:9/never' },
    auth: { secret_refs: ['env:SKIP_SECRET'] },
    policy,
  });
  writeFileSync(
    join(dir, 'shop.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [
        job('a', {
          blackout: [
            { dates_file: 'holidays.txt' },
            { cron: '0 22 * * 5', duration_seconds: 7200 },
            { from: '2031-01-01T00:00:00Z', to: '2031-01-02T00:00:00Z' },
          ],
        }),
        job('b'),
      ],
    }),
  );
  writeFileSync(
    join(dir, 'crm.json'),
    JSON.stringify({ version: 1, app: 'crm', jobs: [job('sync')] }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'shop.json'), join(dir, 'crm.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env,
  });
  for (const [name, role, apps] of [
    ['op', 'operator', ['shop']],
    ['crm-op', 'operator', ['crm']],
    ['view', 'viewer', undefined],
  ] as const) {
    const r = await api(admin(), 'POST', '/api/v1/tokens', {
      name,
      role,
      ...(apps ? { apps } : {}),
    });
    expect(r.status).toBe(201);
    tokens[name] = r.json.token as string;
  }
});
afterAll(async () => {
  await daemon.stop(1000);
});

describe('the API', () => {
  it('skips the next fire (201), answers the same skip again (200), skips a given fire; the job view shows them and the windows', async () => {
    const [first, second, third] = fires(3);
    const r = await api(tokens['op']!, 'POST', '/api/v1/jobs/shop/b/skip', { next: true });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      created: true,
      skip: { app: 'shop', job: 'b', at: first, by: 'op' },
    });
    const again = await api(tokens['op']!, 'POST', '/api/v1/jobs/shop/b/skip', { next: true });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ ...r.json, created: false });
    const at = await api(tokens['op']!, 'POST', '/api/v1/jobs/shop/b/skip', { at: third });
    expect([at.status, at.json.skip.at]).toEqual([201, third]);
    const view = await api(tokens['view']!, 'GET', '/api/v1/jobs/shop/b');
    expect(view.json.skips.map((s: { at: string }) => s.at)).toEqual([first, third]);
    expect(second).not.toBe(first);
    const list = await api(tokens['view']!, 'GET', '/api/v1/jobs');
    const b = list.json.jobs.find((j: { job: string }) => j.job === 'b');
    expect(b.skips).toHaveLength(2);
    // the windows as written: the holiday file's name, not its dates
    const a = await api(tokens['view']!, 'GET', '/api/v1/jobs/shop/a');
    expect(a.json.blackout).toEqual([
      { dates_file: 'holidays.txt' },
      { cron: '0 22 * * 5', duration_seconds: 7200 },
      { from: '2031-01-01T00:00:00Z', to: '2031-01-02T00:00:00Z' },
    ]);
    expect(JSON.stringify(a.json)).not.toContain('2031-12-24');
    // the audit log has the verb with who and the job
    const audit = (await api(admin(), 'GET', '/api/v1/audit?action=skip&limit=10')).json.audit;
    expect(audit[0]).toMatchObject({
      who: 'op',
      action: 'skip',
      app: 'shop',
      job: 'b',
      result: 'ok',
      status: 201,
    });
    expect(audit).toHaveLength(3);
  });

  it.each([
    [{}, 400, '', /give "next": true or "at"/],
    [{ next: true, at: '2040-01-01T00:17:00Z' }, 400, '', /one of "next" and "at", not both/],
    [{ next: false }, 400, 'next', /"next" must be true, found "false"/],
    [{ at: 'tomorrow' }, 400, 'at', /"at" must be an RFC 3339 instant, found "tomorrow"/],
    [{ every: 1 }, 400, 'every', /unknown field "every"/],
    [
      { at: '2040-01-01T00:18:00Z' },
      400,
      undefined,
      /is not a fire of shop\/b \(its next fire is /,
    ],
    [{ at: '2020-01-01T00:17:00Z' }, 400, undefined, /is not in the future/],
    ['not json', 400, '', /request body must be JSON/],
  ])('refuses %j with %i', async (body, status, path, message) => {
    const r = await api(tokens['op']!, 'POST', '/api/v1/jobs/shop/b/skip', body);
    expect(r.status).toBe(status);
    expect(r.json.error.message).toMatch(message);
    if (path !== undefined) expect(r.json.error.path).toBe(path);
  });

  it('404 for no such job; 403 for a viewer and for an operator of another app', async () => {
    const none = await api(tokens['op']!, 'POST', '/api/v1/jobs/shop/nope/skip', { next: true });
    expect([none.status, none.json.error.message]).toEqual([404, 'no job "shop/nope"']);
    const viewer = await api(tokens['view']!, 'POST', '/api/v1/jobs/shop/a/skip', { next: true });
    expect(viewer.status).toBe(403);
    const other = await api(tokens['crm-op']!, 'POST', '/api/v1/jobs/shop/a/skip', { next: true });
    expect(other.status).toBe(403);
    expect(
      (await api(tokens['crm-op']!, 'POST', '/api/v1/jobs/crm/sync/skip', { next: true })).status,
    ).toBe(201);
  });

  it('is in the OpenAPI document with the operator role', async () => {
    const doc = (await (await fetch(`${daemon.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-cronix-role'?: string }>>;
    };
    expect(doc.paths['/api/v1/jobs/{app}/{job}/skip']?.['post']?.['x-cronix-role']).toBe(
      'operator',
    );
  });
});

describe('the CLI', () => {
  const opts = () => ['--url', daemon.url, '--token-file', tokenFile()];
  let file: string | undefined;
  const tokenFile = (): string => {
    if (!file) {
      file = join(dir, 'op.token');
      writeFileSync(file, `${tokens['op']}\n`);
    }
    return file;
  };

  it('cronix skip --next and --at, in both output formats', async () => {
    const [first, second] = fires(2);
    const table = await cronixAsync(['skip', 'shop/a', '--next', ...opts()]);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/JOB\s+AT\s+BY\s+SINCE\s+NEW/i);
    expect(table.stdout).toContain(first);
    expect(table.stdout).toMatch(/op\s+\S+\s+yes/);
    const json = await cronixAsync(['skip', 'shop.a', '--at', second!, '-o', 'json', ...opts()]);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      created: true,
      skip: { app: 'shop', job: 'a', at: second, by: 'op' },
    });
    const again = await cronixAsync(['skip', 'shop/a', '--next', '-o', 'json', ...opts()]);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: false, skip: { at: first } });
  });

  it('exit codes: 2 for usage, 1 when the daemon refuses', async () => {
    const neither = await cronixAsync(['skip', 'shop/a', ...opts()]);
    expect([neither.status, neither.stderr]).toEqual([
      2,
      'error: give --next (the next fire) or --at <instant> (one fire)\n',
    ]);
    const both = await cronixAsync([
      'skip',
      'shop/a',
      '--next',
      '--at',
      '2040-01-01T00:17:00Z',
      ...opts(),
    ]);
    expect(both.status).toBe(2);
    const bad = await cronixAsync(['skip', 'shop/a', '--at', 'soon', ...opts()]);
    expect([bad.status, bad.stderr]).toEqual([
      2,
      'error: --at: expected an RFC 3339 instant or Unix seconds, found "soon"\n',
    ]);
    const name = await cronixAsync(['skip', 'shop', '--next', ...opts()]);
    expect(name.status).toBe(2);
    const refused = await cronixAsync(['skip', 'shop/nope', '--next', ...opts()]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('no job "shop/nope"');
  });

  it('cronix validate names the holiday file and the bad line', () => {
    writeFileSync(join(dir, 'bad-days.txt'), '2031-12-24\n2031-02-30\n');
    writeFileSync(
      join(dir, 'bad.json'),
      JSON.stringify({
        version: 1,
        app: 'bad',
        jobs: [
          {
            name: 'j',
            schedule: HOURLY,
            request: { url: 'https://example.com/' },
            policy: { blackout: [{ dates_file: 'bad-days.txt' }] },
          },
        ],
      }),
    );
    const r = cronix(['validate', join(dir, 'bad.json')]);
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain('jobs/0/policy/blackout/0/dates_file');
    expect(`${r.stdout}${r.stderr}`).toContain('line 2: "2031-02-30" is not a day of the calendar');
  });
});
