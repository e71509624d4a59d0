/**
 * cronix as a systemd service: the unit in contrib/systemd passes `systemd-analyze verify`, and
 * the real `cronix serve` speaks sd_notify to a unix datagram socket this test binds (as systemd
 * does): READY=1 once the API answers, WATCHDOG=1 at half of WATCHDOG_USEC, RELOADING=1 then
 * READY=1 around a SIGHUP reload, STOPPING=1 on SIGTERM — and still exits.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT } from '../helpers/cli.js';
import { tempDir, until } from '../helpers/common.js';
import { manifestDir, spawnServe, TEST_SECRET } from '../helpers/serve.js';

interface Datagram {
  bind(path: string): void;
  close(): void;
  on(event: 'message', listener: (buf: Buffer) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}
const unix = createRequire(import.meta.url)('unix-dgram') as {
  createSocket(type: 'unix_dgram'): Datagram;
};

const sockets: Datagram[] = [];
afterAll(() => {
  for (const s of sockets) s.close();
});

/** A bound notify socket and the messages it got, in order. */
function notifySocket(): { path: string; messages: string[] } {
  const path = join(tempDir('notify'), 'notify.sock');
  const messages: string[] = [];
  const socket = unix.createSocket('unix_dgram');
  socket.on('message', (buf) => messages.push(buf.toString()));
  socket.on('error', (err) => messages.push(`error: ${err.message}`));
  socket.bind(path);
  sockets.push(socket);
  return { path, messages };
}

describe('contrib/systemd/cronix.service', () => {
  it('passes systemd-analyze verify', () => {
    const unit = readFileSync(join(REPO_ROOT, 'contrib/systemd/cronix.service'), 'utf8');
    expect(unit).toMatch(/^Type=notify$/m);
    expect(unit).not.toMatch(/^MemoryDenyWriteExecute=yes/m);
    // verify checks that ExecStart's binary exists: point it at the build
    chmodSync(CLI, 0o755);
    const dir = tempDir('unit');
    const file = join(dir, 'cronix.service');
    writeFileSync(file, unit.replace('/usr/bin/cronix', CLI));
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('cronix serve under Type=notify', () => {
  it('READY=1 once the API answers, watchdog pings, RELOADING=1 on SIGHUP, STOPPING=1 on SIGTERM', async () => {
    const { path, messages } = notifySocket();
    const dir = manifestDir('svc', [
      { name: 'j', schedule: '0 0 1 1 *', request: { url: 'http://127.0.0.1:9/x' } },
    ]);
    const served = await spawnServe(dir, 0, {
      waitListening: false,
      env: {
        PATH: process.env['PATH'],
        CRON_SECRET: TEST_SECRET,
        NOTIFY_SOCKET: path,
        WATCHDOG_USEC: '400000',
      },
    });
    const pid = served.child.pid as number;
    const ready = await until(
      () => messages.find((m) => m.startsWith('READY=1')),
      30_000,
      'READY=1',
    );
    expect(ready).toContain(`MAINPID=${pid}`);
    expect(ready).toMatch(/STATUS=serving 1 job\(s\) on http:\/\/127\.0\.0\.1:\d+/);
    // ready means ready: the API answers at once
    const url = /on (http:\/\/[^\s]+)/.exec(ready)?.[1] as string;
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    await until(
      () => (messages.filter((m) => m === 'WATCHDOG=1').length >= 2 ? true : undefined),
      10_000,
      'two watchdog pings',
    );

    served.child.kill('SIGHUP');
    await until(
      () => {
        const i = messages.indexOf('RELOADING=1');
        return i >= 0 && messages.slice(i).some((m) => m.startsWith('READY=1')) ? true : undefined;
      },
      15_000,
      'RELOADING=1 then READY=1',
    );

    served.child.kill('SIGTERM');
    const exited = await served.exited;
    expect(exited.code).toBe(0);
    const stopping = messages.find((m) => m.startsWith('STOPPING=1'));
    expect(stopping).toContain('SIGTERM');
    // nothing after STOPPING=1: the watchdog stopped with it
    expect(messages.at(-1)).toBe(stopping);
    expect(messages.filter((m) => m.startsWith('error'))).toEqual([]);
  }, 60_000);

  it('an abstract NOTIFY_SOCKET is refused with a warning that says so; the daemon runs on', async () => {
    const dir = manifestDir('svc', [
      { name: 'j', schedule: '0 0 1 1 *', request: { url: 'http://127.0.0.1:9/x' } },
    ]);
    const served = await spawnServe(dir, 0, {
      env: { PATH: process.env['PATH'], CRON_SECRET: TEST_SECRET, NOTIFY_SOCKET: '@cronix-test' },
    });
    await until(
      () => (served.output().includes('"event":"systemd-notify"') ? true : undefined),
      10_000,
      'the warning',
    );
    expect(served.output()).toContain('abstract sockets are not supported');
    served.child.kill('SIGTERM');
    expect((await served.exited).code).toBe(0);
  }, 60_000);
});
