/**
 * The systemd unit files: `RuntimeMaxSec=` (and `TimeoutStartSec=`, which is what bounds a
 * oneshot) cover the worst-case fire + 30 s; the rendered units pass the real
 * `systemd-analyze verify`; and what systemd cannot honour is refused with the reason.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobPolicy } from '../../src/contract/manifest/types.js';
import { createSystemdBackend } from '../../src/reconcile/backends/systemd.js';
import {
  parseUnitFile,
  runtimeMaxSeconds,
  unitSetting,
} from '../../src/reconcile/backends/systemd-units.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { contractManifest } from './contract.js';

const run = promisify(execFile);
const NOW = Date.parse('2026-01-01T00:00:00Z');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function backendIn(dir: string, zoneInfoDir?: string) {
  return createSystemdBackend({
    systemdUnitDir: dir,
    // an executable that exists, so `systemd-analyze verify` can check ExecStart=
    triggerCommand: [process.execPath, '/opt/cronix/dist/bin/cronix.mjs'],
    shimArgs: ['--spec-dir', '/etc/cronix/jobs'],
    systemdRunning: () => false,
    now: () => NOW,
    ...(zoneInfoDir ? { zoneInfoDir } : {}),
  });
}

const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'cronix-units-'));
  dirs.push(d);
  return d;
};

/** An independent worst case: every attempt times out, every backoff sleeps its full length. */
function expectedWorstCase(
  p: Pick<JobPolicy, 'timeout_seconds' | 'retries' | 'concurrency'>,
): number {
  let sleeps = 0;
  for (let attempt = 1; attempt < p.retries.max_attempts; attempt++) {
    sleeps += Math.min(p.retries.min_seconds * 2 ** (attempt - 1), p.retries.max_seconds);
  }
  const replaceWait =
    p.concurrency === 'Replace' ? Math.ceil(Math.max(p.timeout_seconds / 2, 5)) : 0;
  return p.retries.max_attempts * p.timeout_seconds + sleeps + replaceWait;
}

describe('RuntimeMaxSec= covers the worst-case fire + 30 s', () => {
  const table: [string, Record<string, unknown>, number][] = [
    ['defaults (3 × 60 s, backoff 1 s then 2 s)', {}, 213],
    ['one attempt of 300 s', { timeout_seconds: 300, retries: { max_attempts: 1 } }, 330],
    [
      '10 attempts of 10 s, backoff 1..60',
      { timeout_seconds: 10, retries: { max_attempts: 10, min_seconds: 1, max_seconds: 60 } },
      100 + (1 + 2 + 4 + 8 + 16 + 32 + 60 + 60 + 60) + 30,
    ],
    [
      'max: 10 × 600 s, backoff capped at 60',
      { timeout_seconds: 600, retries: { max_attempts: 10, min_seconds: 5, max_seconds: 60 } },
      6000 + (5 + 10 + 20 + 40 + 60 * 5) + 30,
    ],
    [
      'no backoff',
      { timeout_seconds: 1, retries: { max_attempts: 4, min_seconds: 0, max_seconds: 1 } },
      4 + 30,
    ],
    [
      'Replace waits max(timeout/2, 5) s for the old holder',
      { concurrency: 'Replace', timeout_seconds: 60 },
      213 + 30,
    ],
    [
      'Replace with a short timeout waits 5 s',
      { concurrency: 'Replace', timeout_seconds: 4, retries: { max_attempts: 1 } },
      4 + 5 + 30,
    ],
  ];

  it.each(table)('%s', async (_name, policy, seconds) => {
    const dir = tempDir();
    const m = contractManifest('billing', [{ name: 'settle', schedules: ['0 3 * * *'], policy }]);
    const job = m.jobs[0]!;
    expect(runtimeMaxSeconds(job.policy)).toBe(seconds);
    expect(seconds).toBe(expectedWorstCase(job.policy) + 30);
    const backend = backendIn(dir);
    const [entry] = desiredEntries(m);
    expect(backend.refuse(entry!)).toEqual([]);
    await backend.apply({ deletes: [], updates: [], creates: [entry!] });
    const body = parseUnitFile(
      readFileSync(join(dir, 'cronix-billing_settle-0.service'), 'utf8'),
    ).body;
    expect(unitSetting(body, 'TimeoutStartSec')).toBe(String(seconds));
    expect(unitSetting(body, 'RuntimeMaxSec')).toBeUndefined(); // no effect on a oneshot
    expect(unitSetting(body, 'TimeoutStartSec')).toBe(String(seconds));
  });
});

describe('RuntimeMaxSec= of a command job', () => {
  it('adds the graceful stop to every attempt and to the Replace wait', async () => {
    const dir = tempDir();
    const m = contractManifest('ops', [
      {
        name: 'backup',
        schedules: ['0 3 * * *'],
        command: { argv: ['/usr/local/bin/backup'], graceful_stop_seconds: 20 },
        policy: { concurrency: 'Replace', timeout_seconds: 60, retries: { max_attempts: 2 } },
      },
    ]);
    const job = m.jobs[0]!;
    // 2 × (60 + 20) + backoff 1 + Replace wait (30 + 20) + 30
    expect(runtimeMaxSeconds(job.policy, 20)).toBe(160 + 1 + 50 + 30);
    const backend = backendIn(dir);
    const [entry] = desiredEntries(m);
    expect(backend.refuse(entry!)).toEqual([]);
    await backend.apply({ deletes: [], updates: [], creates: [entry!] });
    const body = parseUnitFile(readFileSync(join(dir, 'cronix-ops_backup-0.service'), 'utf8')).body;
    expect(unitSetting(body, 'TimeoutStartSec')).toBe('241');
    expect(unitSetting(body, 'ExecStart')).toMatch(/ trigger ops\.backup /);
  });
});

describe('rendered units pass systemd-analyze verify', () => {
  it('service and timer load cleanly: no RuntimeMaxSec= warning any more (it has no effect on a oneshot)', async () => {
    const dir = tempDir();
    const m = contractManifest('billing', [
      { name: 'settle', schedules: ['*/10 * * * *', '0 0 1,15 * FRI'] },
      { name: 'nightly', schedules: ['@every 90m'], policy: { jitter: { random_seconds: 30 } } },
    ]);
    const backend = backendIn(dir);
    await backend.apply({ deletes: [], updates: [], creates: desiredEntries(m) });
    const files = ['settle-0', 'settle-1', 'nightly-0'].flatMap((n) => [
      join(dir, `cronix-billing_${n}.service`),
      join(dir, `cronix-billing_${n}.timer`),
    ]);
    const { stderr } = await run('systemd-analyze', ['verify', ...files], {
      env: { ...process.env, SYSTEMD_LOG_COLOR: '0' },
    });
    const other = stderr.split('\n').filter((l) => l.trim() !== '' && true);
    expect(other).toEqual([]);
    const timer = readFileSync(join(dir, 'cronix-billing_settle-1.timer'), 'utf8');
    expect(timer).toContain(
      'OnCalendar=Fri *-*-* 00:00:00 UTC\nOnCalendar=*-*-01,15 00:00:00 UTC\n',
    );
    expect(timer).toContain(
      'Persistent=true\nAccuracySec=1s\nUnit=cronix-billing_settle-1.service\n',
    );
    expect(timer).toContain('[Install]\nWantedBy=timers.target\n');
    expect(readFileSync(join(dir, 'cronix-billing_nightly-0.timer'), 'utf8')).toContain(
      'RandomizedDelaySec=30\n',
    );
    const service = readFileSync(join(dir, 'cronix-billing_settle-0.service'), 'utf8');
    expect(service.split('\n')[0]).toMatch(
      /^# cronix:v1 app=billing job=settle index=0 hash=[0-9a-f]{16} sum=[0-9a-f]{16}$/,
    );
    expect(service).toContain(
      `ExecStart=${process.execPath} /opt/cronix/dist/bin/cronix.mjs trigger billing.settle --spec-dir /etc/cronix/jobs\n`,
    );
    expect(service).toContain('Type=oneshot\n');
  });
});

describe('refusals: what a systemd timer cannot honour', () => {
  const refusal = (
    policy: Record<string, unknown> | undefined,
    schedule = '0 3 * * *',
    tz = 'UTC',
    zoneInfoDir?: string,
  ) => {
    const m = contractManifest(
      'billing',
      [{ name: 'settle', schedules: [schedule], ...(policy ? { policy } : {}) }],
      tz,
    );
    return backendIn(tempDir(), zoneInfoDir).refuse(desiredEntries(m)[0]!).join('; ') || null;
  };

  it.each([
    ['Enqueue', { concurrency: 'Enqueue' }, /Enqueue.*cronix serve/],
    ['max_concurrent > 1', { concurrency: 'Forbid', max_concurrent: 3 }, /max_concurrent 3/],
    [
      'catch-up of every missed fire',
      { catchup: { mode: 'all' } },
      /catchup\.mode "all".*Persistent=true/,
    ],
    ['a catch-up window', { catchup: { window_seconds: 600 } }, /window_seconds 600/],
    ['a stable jitter offset', { jitter: { stable_seconds: 30 } }, /stable_seconds 30.*machine id/],
  ])('%s', (_name, policy, reason) => {
    expect(refusal(policy)).toMatch(reason);
  });

  it('random jitter up to the gap between fires', () => {
    expect(refusal({ jitter: { random_seconds: 120 } }, '*/5 * * * *')).toBeNull();
    expect(refusal({ jitter: { random_seconds: 300 } }, '*/5 * * * *')).toMatch(
      /random_seconds 300/,
    );
  });

  it('Allow and Replace only where a fire cannot outlast the gap to the next one', () => {
    expect(refusal({ concurrency: 'Allow' }, '* * * * *')).toMatch(/"Allow".*213 s.*60 s apart/);
    expect(refusal({ concurrency: 'Replace' }, '*/2 * * * *')).toMatch(/"Replace"/);
    expect(refusal({ concurrency: 'Allow' }, '*/5 * * * *')).toBeNull(); // 213 s < 300 s
    expect(refusal({ concurrency: 'Forbid' }, '* * * * *')).toBeNull(); // the dropped overlap is Forbid's outcome
  });

  it('catch-up none is Persistent=false', async () => {
    const dir = tempDir();
    const m = contractManifest('billing', [
      { name: 'settle', policy: { catchup: { mode: 'none' } } },
    ]);
    await backendIn(dir).apply({ deletes: [], updates: [], creates: desiredEntries(m) });
    expect(readFileSync(join(dir, 'cronix-billing_settle-0.timer'), 'utf8')).toContain(
      'Persistent=false\n',
    );
  });

  it('schedules systemd cannot state: @every not dividing the day, DST transitions', () => {
    expect(refusal(undefined, '@every 7m')).toMatch(/divides 24 h/);
    expect(refusal(undefined, '30 2 * * *', 'America/New_York')).toMatch(/spring-forward/);
    expect(refusal(undefined, '*/20 * * * *', 'Australia/Lord_Howe')).toMatch(/fall-back/);
    expect(refusal(undefined, '*/20 * * * *', 'Europe/Berlin')).toBeNull(); // stated in UTC
  });

  it('a zone missing from the host tz database', () => {
    const empty = tempDir();
    expect(refusal(undefined, '0 9 * * *', 'Europe/Berlin', empty)).toMatch(
      /missing from this host's tz database/,
    );
    expect(refusal(undefined, '@every 1h', 'Europe/Berlin', empty)).toBeNull(); // stated in UTC
  });
});
