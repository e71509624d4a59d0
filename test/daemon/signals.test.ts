/**
 * `cronix serve` and signals at the edge of start-up (real processes): the `listening` line is
 * the moment a supervisor, a script or a test may signal the daemon, so its SIGTERM and SIGHUP
 * handlers are in place before that line is written. Measured before the fix: a SIGTERM sent
 * the moment the line arrived killed the daemon (default disposition) in 2 of 30 starts; a
 * signal that comes while the daemon starts is held and handled once it runs.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers/common.js';
import { SERVE_CLI, TEST_SECRET } from '../helpers/serve.js';

const dir = tempDir('signals');
const manifest = join(dir, 'm.json');
writeFileSync(
  manifest,
  JSON.stringify({
    version: 1,
    app: 'sig',
    jobs: [
      {
        name: 'yearly',
        schedule: '0 0 1 1 *',
        request: { url: 'http://127.0.0.1:9/y' },
        auth: { secret_refs: ['env:CRON_SECRET'] },
      },
    ],
  }),
);

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/**
 * Starts a daemon and sends `signal` from the 'data' handler that first sees `listening` (no
 * polling delay); with SIGHUP, one SIGTERM follows once the reload is logged.
 */
function signalAtListening(i: number, signal: NodeJS.Signals): Promise<Ended> {
  const child = spawn(
    process.execPath,
    [
      SERVE_CLI,
      'serve',
      manifest,
      '--data-dir',
      join(dir, `data-${signal}-${i}`),
      '--listen',
      '127.0.0.1:0',
      '--grace-period',
      '1',
    ],
    {
      env: { PATH: process.env['PATH'], CRON_SECRET: TEST_SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let sent = false;
  let stopSent = false;
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
    if (!sent && output.includes('"event":"listening"')) {
      sent = true;
      child.kill(signal);
    }
    // once: a second SIGTERM that lands while the process is already exiting (its handlers
    // gone) would end it by the default disposition — not what is tested here
    if (signal === 'SIGHUP' && !stopSent && output.includes('"event":"reloaded"')) {
      stopSent = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.on('close', (code, sig) => {
      clearTimeout(killer);
      resolve({ code, signal: sig, output });
    }),
  );
}

it('a SIGTERM sent the moment `listening` is printed stops the daemon cleanly (exit 0), every time', async () => {
  for (let i = 0; i < 30; i++) {
    const r = await signalAtListening(i, 'SIGTERM');
    expect({ code: r.code, signal: r.signal }, `start ${i}:\n${r.output}`).toEqual({
      code: 0,
      signal: null,
    });
    expect(r.output).toContain('"event":"stopped"');
  }
}, 300_000);

it('a SIGHUP sent the moment `listening` is printed reloads the manifests; the daemon lives on', async () => {
  for (let i = 0; i < 10; i++) {
    const r = await signalAtListening(i, 'SIGHUP');
    expect(r.output, `start ${i}`).toContain('"event":"reloaded"');
    expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
  }
}, 300_000);
