/**
 * Command jobs in real `cronix serve` processes (SPEC §11): SIGKILL of the daemon during a long
 * command, then a restart that stops the leftover group before the run ends `crashed`; the
 * environment the daemon gives a job (and what it keeps to itself); `cronix logs` and
 * `cronix logs -f`; an unresolvable env_from_secrets ref refused at start-up.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cronixAsync } from '../helpers/cli.js';
import { api, manifestDir, spawnServe, until, type Served } from '../helpers/serve.js';
import { alive, readPid, scriptDir, stubbornScript } from '../helpers/scripts.js';

/** A manifest dir with one command job `cmd/task` (no auth: a command job signs nothing). */
function commandDir(command: Record<string, unknown>, policy: object = {}): string {
  const dir = manifestDir('cmd', []);
  const manifest = {
    version: 1,
    app: 'cmd',
    jobs: [
      {
        name: 'task',
        schedule: '0 0 1 1 *',
        command,
        policy: { retries: { max_attempts: 1 }, timeout_seconds: 600, ...policy },
      },
    ],
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

async function trigger(s: Served): Promise<string> {
  const r = await api(s, 'POST', '/api/v1/jobs/cmd/task/trigger');
  expect(r.status).toBe(202);
  return (r.json['run'] as Record<string, unknown>)['id'] as string;
}

async function ended(s: Served, id: string): Promise<Record<string, unknown>> {
  return until(
    async () => {
      const r = (await api(s, 'GET', `/api/v1/runs/${id}`)).json;
      return r['phase'] === 'ended' ? r : undefined;
    },
    20_000,
    `run ${id} to end`,
  );
}

it('SIGKILL of the daemon during a long command; the restart stops the leftover group, then ends the run crashed', async () => {
  const pids = scriptDir();
  const dir = commandDir({ argv: [stubbornScript(pids)], graceful_stop_seconds: 1 });
  const a = await spawnServe(dir);
  const id = await trigger(a);
  const leader = await readPid(join(pids, 'leader.pid'));
  const grandchild = await readPid(join(pids, 'grandchild.pid'));
  // the pid is durable before we kill: the restart finds it in the ledger
  await until(async () => {
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(dir, 'data', 'ledger.sqlite'), { readonly: true });
    try {
      const row = db.prepare('SELECT pid FROM runs WHERE id = ?').get(id) as { pid: number | null };
      return row.pid === leader ? true : undefined;
    } finally {
      db.close();
    }
  });
  a.child.kill('SIGKILL');
  await a.exited;
  // the daemon is gone; its job is not
  expect(alive(leader)).toBe(true);
  expect(alive(grandchild)).toBe(true);
  const b = await spawnServe(dir);
  expect(alive(leader)).toBe(false);
  expect(alive(grandchild)).toBe(false);
  expect((await api(b, 'GET', `/api/v1/runs/${id}`)).json).toMatchObject({
    phase: 'ended',
    outcome: 'crashed',
  });
  expect(b.output()).toContain(
    `run ${id} was left running by a crash; stopped its process group ${leader}`,
  );
  const log = readFileSync(join(dir, 'data', 'logs', `${id}.log`), 'utf8');
  expect(log).toContain('started');
  expect(log).toContain(
    `--- cronix: the daemon had crashed; stopped leftover process group ${leader} ---`,
  );
  b.child.kill('SIGTERM');
  expect((await b.exited).code).toBe(0);
}, 60_000);

it('SIGTERM of the daemon past its grace stops the command group; the run ends stopped', async () => {
  const pids = scriptDir();
  const dir = commandDir({ argv: [stubbornScript(pids)], graceful_stop_seconds: 1 });
  const a = await spawnServe(dir); // --grace-period 1
  const id = await trigger(a);
  const leader = await readPid(join(pids, 'leader.pid'));
  const grandchild = await readPid(join(pids, 'grandchild.pid'));
  a.child.kill('SIGTERM');
  expect((await a.exited).code).toBe(0);
  expect(alive(leader)).toBe(false);
  expect(alive(grandchild)).toBe(false);
  const b = await spawnServe(dir);
  expect((await api(b, 'GET', `/api/v1/runs/${id}`)).json).toMatchObject({
    outcome: 'stopped',
    error: 'daemon shutting down',
  });
  b.child.kill('SIGTERM');
  await b.exited;
}, 60_000);

it('the environment: PATH HOME LANG TZ of the daemon, env, env_from_secrets, CRONIX_*; nothing else', async () => {
  const dir = commandDir({
    argv: ['/usr/bin/env'],
    env: { MODE: 'nightly' },
    env_from_secrets: { DB_PASSWORD: 'env:DB_PW' },
  });
  const s = await spawnServe(dir, 0, {
    env: {
      PATH: process.env['PATH'],
      HOME: '/',
      LANG: 'C.UTF-8',
      TZ: 'UTC',
      DB_PW: 'daemon-held-password-1',
      CRON_SECRET: 'a-signing-secret-of-the-daemon',
      LEAK: 'must-not-reach-the-job',
    },
  });
  const id = await trigger(s);
  expect(await ended(s, id)).toMatchObject({ outcome: 'success', last_status: 0 });
  const res = await fetch(`${s.url}/api/v1/runs/${id}/log`, {
    headers: { authorization: `Bearer ${s.token}` },
  });
  const text = await res.text();
  const names = text
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(0, l.indexOf('=')));
  expect(names.sort()).toEqual(
    [
      'CRONIX_ATTEMPT',
      'CRONIX_FIRE_TIME',
      'CRONIX_RUN_ID',
      'CRONIX_RUN_KEY',
      'DB_PASSWORD',
      'HOME',
      'LANG',
      'MODE',
      'PATH',
      'TZ',
    ].sort(),
  );
  expect(text).toContain('DB_PASSWORD=[REDACTED]');
  expect(text).toContain(`CRONIX_RUN_ID=${id}`);
  expect(text).not.toContain('daemon-held-password-1');
  expect(text).not.toContain('must-not-reach-the-job');
  expect(s.output()).not.toContain('daemon-held-password-1');
  s.child.kill('SIGTERM');
  await s.exited;
}, 60_000);

it('cronix logs prints the output; -f follows a running command until it ends', async () => {
  const dir = commandDir({ argv: ['/bin/sh', '-c', 'echo first; sleep 2; echo last'] });
  const s = await spawnServe(dir);
  const id = await trigger(s);
  const env = { ...process.env, CRONIX_URL: s.url, CRONIX_TOKEN: s.token };
  const started = Date.now();
  const followed = await cronixAsync(['logs', id, '-f'], { env });
  expect(followed).toMatchObject({ status: 0, stdout: 'first\nlast\n', stderr: '' });
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_500); // it waited for the end
  const plain = await cronixAsync(['logs', id], { env });
  expect(plain).toMatchObject({ status: 0, stdout: 'first\nlast\n' });
  const missing = await cronixAsync(['logs', 'no-such-run'], { env });
  expect(missing.status).toBe(1);
  expect(missing.stderr).toContain('404 not_found: no run "no-such-run"');
  s.child.kill('SIGTERM');
  await s.exited;
}, 60_000);

it('an env_from_secrets ref that does not resolve stops the start-up, naming job, variable and ref', async () => {
  const dir = commandDir({ argv: ['/bin/true'], env_from_secrets: { DB_PASSWORD: 'env:NOT_SET' } });
  const s = await spawnServe(dir, 0, { waitListening: false });
  const { code } = await s.exited;
  expect(code).toBe(1);
  expect(s.output()).toContain(
    'error: job cmd/task: command.env_from_secrets DB_PASSWORD: secret ref env:NOT_SET: env var NOT_SET is not set',
  );
}, 30_000);
