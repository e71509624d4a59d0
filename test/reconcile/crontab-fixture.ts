/**
 * Fixtures of the crontab backend: a system-format file in a temp dir, and a real user crontab
 * through crontab(1) (the `nobody` user's, saved and restored), both seeded with foreign lines.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { BackendOptions } from '../../src/reconcile/backends/index.js';
import { createCrontabBackend, type CrontabSeams } from '../../src/reconcile/backends/crontab.js';
import type { BackendFixture } from './contract.js';

/** Foreign content of a system crontab: comments, env settings, odd spacing, a CRLF line. */
export const FOREIGN_SYSTEM = [
  '# /etc/cron.d/example: a foreign file',
  'SHELL=/bin/sh',
  'PATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin',
  'MAILTO=""',
  '',
  '17 *\t* * *\troot    cd / && run-parts --report /etc/cron.hourly',
  '#   indented comment with trailing spaces   ',
  '# cronix:v1 this marker is malformed, so it is not ours',
  '30 2 * * * www-data /usr/bin/php /srv/app/artisan schedule:run # mentions trigger billing.settle',
  '5 4 * * sun root echo "crlf line"\r',
  '@reboot root /usr/local/bin/warm-cache',
  '',
].join('\n');

/** Foreign content of a user crontab (no user field). */
export const FOREIGN_USER = [
  '# my own jobs',
  'MAILTO=""',
  '*/5 * * * * /usr/bin/true  # keep',
  '',
  '0 0 1 1 * echo happy new year',
  '',
].join('\n');

/** Removes our marker blocks with plain line matching (independent of the backend's parser). */
export function withoutOwnedBlocks(text: string): string {
  const lines = text.split(/(?<=\n)/);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const m =
      /^# cronix:v1 app=\S+ job=\S+ index=\d+ hash=[0-9a-f]{16} sum=[0-9a-f]{8}(?: lines=(\d+))?\n$/.exec(
        line,
      );
    if (m === null) out.push(line);
    else i += Number(m[1] ?? 1);
  }
  return out.join('');
}

/** Backend options for tests: an absolute fake trigger binary and temp dirs. */
export function testOptions(extra: Partial<BackendOptions> = {}): BackendOptions {
  return {
    specDir: '/tmp/cronix-test/jobs',
    triggerBin: '/opt/cronix/bin/cronix',
    triggerCommand: ['/opt/cronix/bin/cronix'],
    shimArgs: ['--spec-dir', '/tmp/cronix-test/jobs'],
    env: {},
    cronUser: 'root',
    cronTimezone: 'UTC',
    ...extra,
  };
}

function stampOf(path: string): string {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.mtimeMs}:${s.ctimeMs}:${s.mode}`;
  } catch {
    return 'absent';
  }
}

/** A system-format crontab file in a fresh temp dir, seeded with {@link FOREIGN_SYSTEM}. */
export async function systemFileFixture(
  extra: Partial<BackendOptions> = {},
  seams: CrontabSeams = {},
): Promise<BackendFixture & { path: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-crontab-'));
  const path = join(dir, 'cronix');
  writeFileSync(path, FOREIGN_SYSTEM, { mode: 0o644 });
  const backend = createCrontabBackend(testOptions({ crontabPath: path, ...extra }), seams);
  const read = (): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  return {
    backend,
    path,
    dir,
    raw: async () => read(),
    stamp: async () => stampOf(path),
    assertForeignIntact: async () => expect(withoutOwnedBlocks(read())).toBe(FOREIGN_SYSTEM),
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Whether crontab(1) is installed. */
export function hasCrontab(): boolean {
  return spawnSync('crontab', ['-V']).error === undefined;
}

const USER = 'nobody';
const crontab = (args: string[], input?: string): ReturnType<typeof spawnSync> =>
  spawnSync('crontab', ['-u', USER, ...args], { input, encoding: 'utf8' });

/**
 * The real user crontab of `nobody` through crontab(1) (root may edit any user's crontab), seeded
 * with {@link FOREIGN_USER}; `close` restores what was there before.
 */
export async function userCrontabFixture(): Promise<BackendFixture> {
  const saved = crontab(['-l']);
  const previous = saved.status === 0 ? String(saved.stdout) : null;
  const seeded = crontab(['-'], FOREIGN_USER);
  if (seeded.status !== 0)
    throw new Error(`cannot seed ${USER}'s crontab: ${String(seeded.stderr)}`);
  const spool = `/var/spool/cron/crontabs/${USER}`;
  const backend = createCrontabBackend(testOptions(), {
    crontabCommand: { bin: 'crontab', args: ['-u', USER] },
  });
  const read = (): string => {
    const r = crontab(['-l']);
    return r.status === 0 ? String(r.stdout) : '';
  };
  return {
    backend,
    raw: async () => read(),
    stamp: async () => stampOf(spool),
    assertForeignIntact: async () => expect(withoutOwnedBlocks(read())).toBe(FOREIGN_USER),
    close: async () => {
      if (previous === null) crontab(['-r']);
      else crontab(['-'], previous);
    },
  };
}
