/**
 * Recording a success (SPEC §5.8, §9 item 4) when the record cannot be
 * written: the fire still succeeded (exit 0) and has exactly one terminal
 * line, `success`; the failure is its own warn event, `record-failed`, not a
 * second `success`. In-process (host scope; the state dir is broken by the
 * transport while the request is in flight). The same with a Redis that loses
 * its connection runs as real processes in redis-chaos.test.ts.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { TERMINAL_EVENTS } from '../../src/shim/log.js';
import { dirArgs, normalizedJob, shimDirs, TEST_SECRET, writeSpec } from '../helpers/shim.js';
import { recordingTransport, runInProcess } from './in-process.js';

it('host scope: an unrecordable success → record-failed (warn), then one terminal success, exit 0', async () => {
  const dirs = shimDirs('cronix-record-');
  writeSpec(
    dirs.specDir,
    'app',
    normalizedJob('app', {
      name: 'job',
      schedule: '@hourly',
      request: { url: 'http://x.invalid/' },
    }),
  );
  const markers = join(dirs.stateDir, 'app.job', 'succeeded');
  const transport = recordingTransport(async () => {
    rmSync(markers, { recursive: true, force: true });
    writeFileSync(markers, 'not a directory'); // markSucceeded now fails with ENOTDIR
    return { kind: 'response', status: 200, bodyExcerpt: 'ok' };
  });
  const run = await runInProcess(['app.job', ...dirArgs(dirs)], {
    env: { CRON_SECRET: TEST_SECRET },
    transport,
  });
  expect(run.code).toBe(0);
  expect(run.lines.map((l) => l['event'])).toEqual([
    'fire-start',
    'attempt',
    'record-failed',
    'success',
  ]);
  expect(run.lines.filter((l) => TERMINAL_EVENTS.has(String(l['event'])))).toHaveLength(1);
  expect(run.lines[2]).toMatchObject({ level: 'warn', attempt: 1 });
  expect(String(run.lines[2]?.['err'])).toMatch(/ENOTDIR/);
  expect(run.lines[3]).toMatchObject({ level: 'info', status: 200 });
});
