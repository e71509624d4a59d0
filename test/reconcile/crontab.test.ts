/**
 * The crontab backend: the shared contract on a system file in a temp dir and on a real user
 * crontab through crontab(1); byte-for-byte preservation, untouched files on a no-op, renames,
 * user fields, refusals, hand edits and flag changes.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BackendConfigError } from '../../src/reconcile/backend.js';
import { createCrontabBackend, detectHostZone } from '../../src/reconcile/backends/crontab.js';
import { validateCrontabPath } from '../../src/reconcile/backends/crontab-target.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { plan } from '../../src/reconcile/plan.js';
import { backendContract, contractManifest, reconcileWith } from './contract.js';
import {
  FOREIGN_SYSTEM,
  hasCrontab,
  systemFileFixture,
  testOptions,
  userCrontabFixture,
  withoutOwnedBlocks,
} from './crontab-fixture.js';

backendContract('crontab (system file)', () => systemFileFixture(), { seconds: 'refuse' });

if (hasCrontab() && process.geteuid?.() === 0) {
  backendContract('crontab (user crontab via crontab(1))', () => userCrontabFixture(), {
    stampDelayMs: 1100,
    seconds: 'refuse',
  });
} else {
  describe.skip('backend contract: crontab (user crontab via crontab(1)) — needs crontab(1) and root', () => {
    it('skipped', () => undefined);
  });
}

describe('crontab file details', () => {
  it('writes marker + line with the user field, and keeps every foreign byte', async () => {
    const fx = await systemFileFixture({ cronUser: 'www-data' });
    try {
      await reconcileWith(fx.backend, contractManifest('billing', [{ name: 'settle' }]));
      const text = readFileSync(fx.path, 'utf8');
      expect(text.startsWith(FOREIGN_SYSTEM)).toBe(true);
      const added = text.slice(FOREIGN_SYSTEM.length).split('\n');
      expect(added[0]).toMatch(
        /^# cronix:v1 app=billing job=settle index=0 hash=[0-9a-f]{16} sum=[0-9a-f]{8}$/,
      );
      expect(added[1]).toBe(
        '*/10 * * * * www-data /opt/cronix/bin/cronix trigger billing.settle --spec-dir /tmp/cronix-test/jobs',
      );
      expect(added.slice(2)).toEqual(['']);
      expect(statSync(fx.path).mode & 0o777).toBe(0o644);
    } finally {
      await fx.close?.();
    }
  });

  it('leaves the file untouched (content, mtime, inode) when applying the same manifest again', async () => {
    const fx = await systemFileFixture();
    try {
      const m = contractManifest('billing', [
        { name: 'settle' },
        { name: 'report', schedules: ['0 3 * * *', '@every 90m'] },
      ]);
      await reconcileWith(fx.backend, m);
      const before = statSync(fx.path);
      const content = readFileSync(fx.path);
      await new Promise((r) => setTimeout(r, 30));
      const again = await reconcileWith(fx.backend, m);
      expect(again.unchanged).toHaveLength(3);
      const after = statSync(fx.path);
      expect(readFileSync(fx.path).equals(content)).toBe(true);
      expect(after.mtimeMs).toBe(before.mtimeMs);
      expect(after.ino).toBe(before.ino);
    } finally {
      await fx.close?.();
    }
  });

  it('keeps a file without a final newline intact and adds our block after it', async () => {
    const fx = await systemFileFixture();
    try {
      writeFileSync(fx.path, '0 1 * * * root /bin/true');
      await reconcileWith(fx.backend, contractManifest('billing', [{ name: 'settle' }]));
      const text = readFileSync(fx.path, 'utf8');
      expect(text.startsWith('0 1 * * * root /bin/true\n# cronix:v1 app=billing')).toBe(true);
    } finally {
      await fx.close?.();
    }
  });

  it('keeps the original mode of a non-cron.d file', async () => {
    const fx = await systemFileFixture();
    try {
      const { chmodSync } = await import('node:fs');
      chmodSync(fx.path, 0o600);
      await reconcileWith(fx.backend, contractManifest('billing', [{ name: 'settle' }]));
      expect(statSync(fx.path).mode & 0o777).toBe(0o600);
    } finally {
      await fx.close?.();
    }
  });

  it('notices a hand-edited line and a missing line, and never takes a foreign line for ours', async () => {
    const fx = await systemFileFixture();
    try {
      const m = contractManifest('billing', [{ name: 'settle' }, { name: 'report' }]);
      await reconcileWith(fx.backend, m);
      let text = readFileSync(fx.path, 'utf8');
      text = text.replace(
        /\*\/10 \* \* \* \* root (\S+) trigger billing\.settle/,
        '*/5 * * * * root $1 trigger billing.settle',
      );
      // drop report's cron line: the marker is left followed by a foreign line
      text = text.replace(
        /(# cronix:v1 app=billing job=report[^\n]*\n)[^\n]*\n/,
        '$10 9 * * * root /bin/foreign\n',
      );
      writeFileSync(fx.path, text);
      const owned = await fx.backend.list('billing');
      expect(Object.fromEntries(owned.map((o) => [o.job, o.modified]))).toEqual({
        settle: 'cron line edited by hand',
        report: 'cron line missing',
      });
      const p = await reconcileWith(fx.backend, m);
      expect(p.updates.map((u) => u.reason).sort()).toEqual([
        'cron line edited by hand',
        'cron line missing',
      ]);
      const fixed = readFileSync(fx.path, 'utf8');
      expect(fixed).toContain('0 9 * * * root /bin/foreign\n');
      expect(fixed).toContain('*/10 * * * * root /opt/cronix/bin/cronix trigger billing.settle');
      expect((await fx.backend.list('billing')).every((o) => o.modified === undefined)).toBe(true);
    } finally {
      await fx.close?.();
    }
  });

  it('rewrites entries when --trigger-bin or --cron-user change (same hashes)', async () => {
    const fx = await systemFileFixture();
    try {
      const m = contractManifest('billing', [{ name: 'settle' }]);
      await reconcileWith(fx.backend, m);
      const moved = createCrontabBackend(
        testOptions({
          crontabPath: fx.path,
          triggerCommand: ['/usr/local/bin/cronix'],
          cronUser: 'cron',
        }),
      );
      const p = await reconcileWith(moved, m);
      expect(p.updates.map((u) => u.reason)).toEqual([
        'command or user differs from the current flags',
      ]);
      expect(readFileSync(fx.path, 'utf8')).toContain(
        '*/10 * * * * cron /usr/local/bin/cronix trigger billing.settle',
      );
      await fx.assertForeignIntact();
    } finally {
      await fx.close?.();
    }
  });

  it('drops duplicated blocks of one entry on the next apply', async () => {
    const fx = await systemFileFixture();
    try {
      const m = contractManifest('billing', [{ name: 'settle' }]);
      await reconcileWith(fx.backend, m);
      const text = readFileSync(fx.path, 'utf8');
      const block = text.slice(FOREIGN_SYSTEM.length);
      writeFileSync(fx.path, text + block);
      const p = await reconcileWith(fx.backend, m);
      expect(p.updates.map((u) => u.reason)).toEqual(['duplicate entry']);
      expect(readFileSync(fx.path, 'utf8')).toBe(text);
    } finally {
      await fx.close?.();
    }
  });

  it('removes a file it emptied (a cron.d file of ours only)', async () => {
    const fx = await systemFileFixture();
    try {
      writeFileSync(fx.path, '');
      const m = contractManifest('billing', [{ name: 'settle' }]);
      await reconcileWith(fx.backend, m);
      const p = plan([], await fx.backend.list('billing'), fx.backend, { app: 'billing' });
      await fx.backend.apply({ deletes: p.deletes, updates: [], creates: [] });
      expect(() => statSync(fx.path)).toThrow();
    } finally {
      await fx.close?.();
    }
  });
});

describe('crontab fidelity refusals', () => {
  const refusal = (
    jobs: Parameters<typeof contractManifest>[1],
    tz = 'UTC',
    hostZone = 'UTC',
  ): (string | null)[] => {
    const backend = createCrontabBackend(
      testOptions({ crontabPath: '/tmp/none/cronix', cronTimezone: hostZone }),
    );
    return desiredEntries(contractManifest('billing', jobs, tz)).map(
      (e) => backend.refuse(e).join('; ') || null,
    );
  };

  it('refuses a zone other than the cron daemon’s, naming systemd and cronix serve', () => {
    const [r] = refusal([{ name: 'a', schedules: ['0 9 * * *'] }], 'Europe/Berlin');
    expect(r).toMatch(/differs from the cron daemon's zone "UTC".*--backend systemd.*cronix serve/);
    expect(
      refusal([{ name: 'a', schedules: ['0 9 * * *'] }], 'Europe/Berlin', 'Europe/Berlin'),
    ).toEqual([null]);
    expect(refusal([{ name: 'a', schedules: ['0 9 * * *'] }], 'Etc/UTC', 'UTC')).toEqual([null]);
  });

  it('accepts @every in any job zone when the interval fits the host zone, refuses otherwise', () => {
    expect(
      refusal([{ name: 'a', schedules: ['@every 5m', '@every 90m', '@every 24h'] }], 'Asia/Tokyo'),
    ).toEqual([null, null, null]);
    const [odd, seconds, twoDays] = refusal([
      { name: 'a', schedules: ['@every 7m', '@every 90s', '@every 48h'] },
    ]);
    expect(odd).toMatch(/does not divide the day evenly/);
    expect(seconds).toMatch(/not whole minutes/);
    expect(twoDays).toMatch(/does not divide the day evenly/);
    const [hourly, twoHours] = refusal(
      [{ name: 'a', schedules: ['@every 1h', '@every 2h'] }],
      'UTC',
      'Europe/Berlin',
    );
    expect(hourly).toBeNull();
    expect(twoHours).toMatch(/not multiples of 120 min/);
  });

  it('refuses Enqueue, max_concurrent > 1, catch-up and jitter; defaults and "none" are fine', () => {
    const r = refusal([
      { name: 'a', policy: { concurrency: 'Enqueue' } },
      { name: 'b', policy: { max_concurrent: 2 } },
      { name: 'c', policy: { catchup: { mode: 'latest' } } },
      { name: 'd', policy: { jitter: { random_seconds: 30 } } },
      {
        name: 'e',
        policy: { catchup: { mode: 'none' }, max_concurrent: 1, jitter: { stable_seconds: 0 } },
      },
      { name: 'f' },
    ]);
    expect(r[0]).toMatch(/Enqueue.*needs cronix serve/);
    expect(r[1]).toMatch(/max_concurrent 2/);
    expect(r[2]).toMatch(/catchup/);
    expect(r[3]).toMatch(/jitter/);
    expect(r.slice(4)).toEqual([null, null]);
  });
});

describe('crontab configuration', () => {
  it('validates --crontab-path: cron.d names without dots, no spool files', () => {
    expect(() => validateCrontabPath('/etc/cron.d/cronix.conf')).toThrow(BackendConfigError);
    expect(() => validateCrontabPath('/etc/cron.d/cronix.conf')).toThrow(/no dots|dots/);
    expect(() => validateCrontabPath('/var/spool/cron/crontabs/root')).toThrow(
      /omit --crontab-path/,
    );
    expect(validateCrontabPath('/etc/cron.d/cronix_jobs-1')).toBe('/etc/cron.d/cronix_jobs-1');
    expect(validateCrontabPath('rel/cronix', '/srv')).toBe('/srv/rel/cronix');
  });

  it('refuses a trigger path with "%" and a bad --cron-user', () => {
    expect(() =>
      createCrontabBackend(
        testOptions({ crontabPath: '/tmp/x/c', triggerCommand: ['/opt/100%/cronix'] }),
      ),
    ).toThrow(/"%"/);
    expect(() =>
      createCrontabBackend(testOptions({ crontabPath: '/tmp/x/c', cronUser: 'bad user' })),
    ).toThrow(/--cron-user/);
  });

  it('quotes command words that need it', async () => {
    const fx = await systemFileFixture({ shimArgs: ['--spec-dir', "/srv/it's jobs"] });
    try {
      await reconcileWith(fx.backend, contractManifest('billing', [{ name: 'settle' }]));
      expect(readFileSync(fx.path, 'utf8')).toContain(
        `trigger billing.settle --spec-dir '/srv/it'\\''s jobs'\n`,
      );
      expect(withoutOwnedBlocks(readFileSync(fx.path, 'utf8'))).toBe(FOREIGN_SYSTEM);
    } finally {
      await fx.close?.();
    }
  });

  it('detects the host zone from /etc/localtime, /etc/timezone, then TZ', async () => {
    const { mkdtempSync, symlinkSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'cronix-tz-'));
    const localtime = join(dir, 'localtime');
    const timezone = join(dir, 'timezone');
    expect(detectHostZone({ TZ: ':Asia/Tokyo' }, { localtime, timezone })).toBe('Asia/Tokyo');
    expect(detectHostZone({}, { localtime, timezone })).toBe('UTC');
    writeFileSync(timezone, 'Europe/Paris\n');
    expect(detectHostZone({ TZ: 'Asia/Tokyo' }, { localtime, timezone })).toBe('Europe/Paris');
    symlinkSync('/usr/share/zoneinfo/America/New_York', localtime);
    expect(detectHostZone({}, { localtime, timezone })).toBe('America/New_York');
  });
});
