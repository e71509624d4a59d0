/**
 * A command run's output that could not be written is recorded as lost (SPEC §9 item 6; the
 * adversarial finding 4): with the logs directory on a full filesystem (a tmpfs mounted for the
 * test), the run keeps the command's outcome, and says `output_lost` with the reason — in the
 * ledger, the API, the metrics and at the end of `GET /runs/{id}/log` — instead of a log of
 * 0 bytes that looks complete.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { freePort } from '../helpers/sink.js';

let daemon: DaemonHandle | undefined;
let mounted: string | undefined;
afterAll(async () => {
  await daemon?.stop(1000);
  if (mounted) execFileSync('umount', ['-l', mounted], { stdio: 'ignore' });
});

it('a command run whose output cannot be written says so: output_lost, the reason, a metric, the log', async (ctx) => {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-lost-'));
  const logs = join(dir, 'data', 'logs');
  mkdirSync(logs, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', logs], { stdio: 'ignore' });
    mounted = logs;
  } catch {
    return ctx.skip('this machine cannot mount a tmpfs (needs root)');
  }
  try {
    writeFileSync(join(logs, 'filler'), Buffer.alloc(128 * 1024)); // fills it
  } catch {
    // ENOSPC: full, as intended
  }
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      app: 'ops',
      jobs: [
        {
          name: 'task',
          schedule: '0 0 1 1 *',
          command: { argv: ['/bin/sh', '-c', 'head -c 8192 /dev/zero | tr "\\0" x; echo done'] },
          policy: { retries: { max_attempts: 1 } },
        },
      ],
    }),
  );
  daemon = await startDaemon({
    manifests: [join(dir, 'manifest.json')],
    dataDir: join(dir, 'data'),
    listen: `127.0.0.1:${await freePort()}`,
    noAuth: true,
  });
  const ended = new Promise<void>((r) => daemon!.scheduler.events.once('run-ended', () => r()));
  const { run } = await daemon.scheduler.trigger('ops', 'task');
  await ended;
  const api = async (path: string): Promise<Response> => fetch(`${daemon!.url}${path}`);
  const json = (await (await api(`/api/v1/runs/${run.id}`)).json()) as Record<string, unknown>;
  // the command succeeded; its output did not survive, and the run says so
  expect(json).toMatchObject({ outcome: 'success', output_lost: true });
  expect(json['output_error']).toMatch(/^ENOSPC/);
  const log = await api(`/api/v1/runs/${run.id}/log`);
  expect(log.status).toBe(200);
  expect(log.headers.get('x-cronix-output-lost')).toBe('true');
  expect(await log.text()).toMatch(/--- cronix: output lost: ENOSPC.*---\n$/);
  const metrics = await (await api('/metrics')).text();
  expect(metrics).toMatch(/^cronix_job_output_lost_total\{job="ops\/task"\} 1$/m);
});
