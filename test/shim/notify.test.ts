/**
 * `cronix trigger` sends webhook notifications for its own fire (SPEC §12), as a
 * real process with a spec file written the way `cronix apply` writes it: failed,
 * grouped, recovered, signed; best effort and bounded — the exit code is the
 * fire's, whatever the notifier does.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { specFileContent } from '../../src/reconcile/spec-files.js';
import { signatureValid } from '../notify/harness.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { dirArgs, runShim, shimDirs, type ShimDirs } from '../helpers/shim.js';

let app: Sink;
let hook: Sink;
beforeAll(async () => {
  app = await startSink(() => ({ status: 500 }));
  hook = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await app.close();
  await hook.close();
});

const HOOK_SECRET = 'shim-hook-secret-0123456789';

/** Writes the spec file of job `name` as `cronix apply` would, with its notifier. */
function apply(dirs: ShimDirs, name: string, hookUrl: string): string {
  const r = parseManifest({
    version: 1,
    app: 'shimapp',
    notifiers: { chat: { type: 'webhook', url: hookUrl, secret_refs: ['env:HOOK_SECRET'] } },
    jobs: [
      {
        name,
        schedule: '* * * * *',
        request: { url: `${app.url}/${name}` },
        policy: {
          timeout_seconds: 2,
          retries: { max_attempts: 1, min_seconds: 0, max_seconds: 1 },
        },
        auth: { secret_refs: ['env:CRON_SECRET'] },
        notify: [{ to: 'chat' }],
      },
    ],
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const entry = desiredEntries(r.manifest)[0]!;
  const content = specFileContent(entry);
  expect(JSON.parse(content)).toMatchObject({ notifiers: { chat: { type: 'webhook' } } });
  writeFileSync(join(dirs.specDir, `shimapp.${name}.json`), content, { mode: 0o640 });
  return `shimapp.${name}`;
}

it('failed once, repeats grouped, then recovered; exit codes are the fire’s; signed', async () => {
  const dirs = shimDirs();
  const target = apply(dirs, 'nightly', `${hook.url}/shim-hook`);
  const env = { HOOK_SECRET };
  const start = hook.requests.length;
  app.setScript(() => ({ status: 500 }));
  const first = await runShim(target, dirArgs(dirs), env);
  expect(first.code).toBe(2);
  const second = await runShim(target, dirArgs(dirs), env);
  expect(second.code).toBe(2);
  app.setScript(() => ({ status: 200 }));
  const third = await runShim(target, dirArgs(dirs), env);
  expect(third.code).toBe(0);
  const got = hook.requests.slice(start);
  expect(
    got
      .map((r) => JSON.parse(r.bodyText) as Record<string, unknown>)
      .map((b) => [b['event'], b['count']]),
  ).toEqual([
    ['failed', 1],
    ['recovered', 2],
  ]);
  for (const r of got)
    expect(signatureValid(r.headers['x-cron-signature'], r.url, r.bodyText, HOOK_SECRET)).toBe(
      true,
    );
  const line = first.lines.find((l) => l['event'] === 'notify');
  expect(line).toMatchObject({
    level: 'info',
    notify_event: 'failed',
    notifier: 'chat',
    status: 200,
  });
  expect(first.stdout).not.toContain(HOOK_SECRET);
}, 30_000);

it('a notifier that never answers: the shim gives up within its budget, exit code unchanged', async () => {
  const dead = await startSink(() => ({ hang: true }));
  try {
    const dirs = shimDirs();
    const target = apply(dirs, 'hourly', `${dead.url}/dead`);
    app.setScript(() => ({ status: 500 }));
    const t0 = Date.now();
    const run = await runShim(target, dirArgs(dirs), { HOOK_SECRET });
    const elapsed = Date.now() - t0;
    console.log(`shim with a hanging notifier: exit ${run.code} after ${elapsed} ms`);
    expect(run.code).toBe(2);
    expect(dead.requests).toHaveLength(1);
    expect(run.lines.find((l) => l['event'] === 'notify')).toMatchObject({
      level: 'warn',
      notify_event: 'failed',
      err: 'timeout after 5 s',
    });
  } finally {
    await dead.close();
  }
}, 30_000);
