/**
 * The daemon and the app's `runOnce` together: a run key the app has already done (delivered
 * by an earlier leader whose end write was lost, say) is answered with the stored result and
 * `X-Cron-Run-Once: duplicate`, and the daemon records that run `duplicate` — not `success`,
 * and not a failure — while the side effect stays single. The app is a real process (Express,
 * the SDK's middleware and runOnce on SQLite); the daemon fires every second on the real clock.
 */
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runKey } from '../../src/contract/run.js';
import { sign } from '../../src/contract/signature.js';
import { systemClock } from '../../src/fire/clock.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir, until } from '../helpers/common.js';
import { manifest, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

const SECRET = 'test-secret-0123456789'; // what the test daemon signs with
const dir = tempDir('run-once-daemon');
const db = join(dir, 'app.sqlite');
let app: ChildProcess;
let port: number;
let daemon: TestDaemon;

beforeAll(async () => {
  app = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'test/sdk/fixtures/run-once-app.ts'), `sqlite:${db}`, '0'],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, RUN_ONCE_SECRET: SECRET },
    },
  );
  let out = '';
  app.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  port = Number(await until(() => /"port":(\d+)/.exec(out)?.[1], 30_000, 'the app to listen'));
  daemon = await startTestDaemon(systemClock, [
    manifest('shop', [
      {
        name: 'bill',
        schedule: '* * * * * *',
        request: { method: 'POST', url: `http://127.0.0.1:${port}/job`, body: '{"job":"bill"}' },
        policy: { timeout_seconds: 5, retries: { max_attempts: 1 } },
      },
    ]),
  ]);
}, 40_000);

afterAll(async () => {
  await daemon?.stop();
  app?.kill('SIGKILL');
});

/** Delivers `key` to the app directly, signed, as an earlier leader would have. */
async function deliverFirst(key: string): Promise<string | null> {
  const body = '{"job":"bill"}';
  const res = await fetch(`http://127.0.0.1:${port}/job`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-cron-run-key': key,
      'x-cron-signature': sign({
        secret: SECRET,
        method: 'POST',
        path: '/job',
        body,
        timestamp: Math.floor(Date.now() / 1000),
      }),
    },
    body,
  });
  await res.text();
  return res.headers.get('x-cron-run-once');
}

const effects = (key: string): number => {
  const d = new Database(db, { readonly: true, timeout: 10_000 });
  try {
    return (
      d.prepare('SELECT count(*) AS n FROM effects WHERE run_key = ?').get(key) as { n: number }
    ).n;
  } finally {
    d.close();
  }
};

it('a run key the app already did ends duplicate, with one side effect; the others succeed', async () => {
  const [first] = await daemon.waitEnded(1, 15_000);
  expect(first).toMatchObject({ outcome: 'success', attempts: 1, lastStatus: 200 });
  // the keys of two instants still to come, done at the app before the daemon gets to them
  const hash = first!.runKey.split('#')[2] as string;
  const ahead = [3, 4].map((s) => first!.scheduledTime + s * 1000);
  const keys = ahead.map((t) => runKey('shop', 'bill', t, hash));
  for (const k of keys) expect(await deliverFirst(k)).toBe('executed');

  const runs = await until(
    () => {
      const done = daemon.ended.filter((r) => ahead.includes(r.scheduledTime));
      return done.length === 2 ? done : undefined;
    },
    20_000,
    'the daemon to fire both instants',
  );
  for (const r of runs) {
    expect(keys).toContain(r.runKey);
    expect(r).toMatchObject({ outcome: 'duplicate', attempts: 1, lastStatus: 200 });
    expect(r.error).toBe(
      'the app answered X-Cron-Run-Once: duplicate (the run key had already succeeded there)',
    );
    expect(r.attemptLog).toHaveLength(1);
    expect(effects(r.runKey)).toBe(1);
  }
  // the instants around them were done by the daemon alone: success, one effect each
  const others = daemon.ended.filter((r) => !ahead.includes(r.scheduledTime));
  expect(others.length).toBeGreaterThan(0);
  for (const r of others) {
    expect(r.outcome).toBe('success');
    expect(effects(r.runKey)).toBe(1);
  }
}, 60_000);
