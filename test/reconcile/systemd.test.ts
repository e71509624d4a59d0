/**
 * The systemd backend: the shared contract suite on a temp unit dir seeded with foreign units
 * (once with a recorded `systemctl` standing in for a running systemd, once on a host without
 * systemd), `systemctl` only when content changed, ownership and hand-edit detection, errors.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BackendUnreachableError,
  BackendWriteError,
  type ChangeSet,
} from '../../src/reconcile/backend.js';
import {
  createSystemdBackend,
  type SystemctlRunner,
  type SystemdBackend,
  type SystemdBackendOptions,
} from '../../src/reconcile/backends/systemd.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { changeSetOf, plan } from '../../src/reconcile/plan.js';
import { backendContract, contractManifest } from './contract.js';
import { backendOptionsOf } from '../../src/cli/commands/reconcile-context.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const TRIGGER = ['/usr/local/bin/cronix'];
const SHIM_ARGS = ['--spec-dir', '/etc/cronix/jobs'];

/** Foreign files seeded into every unit dir: none of them may be listed, changed or deleted. */
const FOREIGN: Record<string, string> = {
  'backup.service': '[Service]\nType=oneshot\nExecStart=/usr/bin/backup\n',
  'backup.timer': '[Timer]\nOnCalendar=daily\n\n[Install]\nWantedBy=timers.target\n',
  // looks like ours by name, but carries no marker
  'cronix-legacy-job-0.timer': '# hand-made, not cronix\n[Timer]\nOnCalendar=hourly\n',
  'cronix-legacy_job-0.timer': '# hand-made under the new name, not cronix\n[Timer]\n',
  // a marker that names another entry than the file itself
  'cronix-evil-x-0.service':
    '# cronix:v1 app=evil job=y index=0 hash=0123456789abcdef\n[Service]\n',
  // a drop-in directory beside our (future) service
  'cronix-billing_settle-0.service.d/secrets.conf': '[Service]\nEnvironmentFile=/etc/cronix/env\n',
};

function seed(dir: string): void {
  for (const [name, text] of Object.entries(FOREIGN)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  symlinkSync(join(dir, 'backup.service'), join(dir, 'cronix-link-a-0.service'));
}

function walk(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((n) => join(dir, n))
    .filter((p) => !statSync(p).isDirectory())
    .sort();
}

interface Recorded {
  backend: SystemdBackend;
  dir: string;
  calls: string[][];
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function makeBackend(extra: Partial<SystemdBackendOptions> = {}, running = true): Recorded {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-systemd-'));
  dirs.push(dir);
  seed(dir);
  const calls: string[][] = [];
  const systemctl: SystemctlRunner = async (args) => {
    calls.push([...args]);
    return { code: 0, stdout: '', stderr: '' };
  };
  const backend = createSystemdBackend({
    systemdUnitDir: dir,
    triggerCommand: TRIGGER,
    shimArgs: SHIM_ARGS,
    systemctl,
    systemdRunning: () => running,
    now: () => NOW,
    ...extra,
  });
  return { backend, dir, calls };
}

function fixtureOf(running: boolean) {
  return async () => {
    const { backend, dir, calls } = makeBackend({}, running);
    const seeded = new Map(Object.entries(FOREIGN).map(([n, t]) => [n, t]));
    const stats = new Map(
      [...seeded.keys(), 'cronix-link-a-0.service'].map((n) => [n, statSync(join(dir, n)).ino]),
    );
    return {
      backend,
      raw: async () =>
        walk(dir)
          .map((p) => `== ${relative(dir, p)}\n${readFileSync(p, 'utf8')}`)
          .join('\n'),
      stamp: async () =>
        [
          ...walk(dir).map((p) => {
            const s = statSync(p);
            return `${relative(dir, p)} ${s.ino} ${s.mtimeMs} ${s.ctimeMs}`;
          }),
          `systemctl calls: ${calls.length}`,
        ].join('\n'),
      assertForeignIntact: async () => {
        for (const [name, text] of seeded) {
          expect(readFileSync(join(dir, name), 'utf8')).toBe(text);
          expect(statSync(join(dir, name)).ino).toBe(stats.get(name));
        }
        expect(readFileSync(join(dir, 'cronix-link-a-0.service'), 'utf8')).toBe(
          FOREIGN['backup.service'],
        );
      },
    };
  };
}

backendContract('systemd (recorded systemctl)', fixtureOf(true), { seconds: 'honour' });
backendContract('systemd (no systemd on the host)', fixtureOf(false), { seconds: 'honour' });

const manifest = (jobs: Parameters<typeof contractManifest>[1], app = 'billing') =>
  contractManifest(app, jobs);

async function reconcile(r: Recorded, m: ReturnType<typeof manifest>): Promise<ChangeSet> {
  const p = plan(desiredEntries(m), await r.backend.list(m.app), r.backend);
  expect(p.refusals).toEqual([]);
  const changes = changeSetOf(p);
  await r.backend.apply(changes);
  return changes;
}

describe('systemd backend: systemctl only when content changed', () => {
  it('create → daemon-reload + enable --now; same again → nothing; update → reload + try-restart; delete → disable first', async () => {
    const r = makeBackend();
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(r.calls).toEqual([
      ['daemon-reload'],
      ['enable', '--now', 'cronix-billing_settle-0.timer'],
    ]);

    r.calls.length = 0;
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(r.calls).toEqual([]);

    await reconcile(r, manifest([{ name: 'settle', schedules: ['0 3 * * *'] }]));
    expect(r.calls).toEqual([['daemon-reload'], ['try-restart', 'cronix-billing_settle-0.timer']]);
    expect(readFileSync(join(r.dir, 'cronix-billing_settle-0.timer'), 'utf8')).toContain(
      'OnCalendar=*-*-* 03:00:00 UTC',
    );

    r.calls.length = 0;
    const seen: boolean[] = [];
    const backend = createSystemdBackend({
      systemdUnitDir: r.dir,
      triggerCommand: TRIGGER,
      shimArgs: SHIM_ARGS,
      systemdRunning: () => true,
      now: () => NOW,
      systemctl: async (args) => {
        r.calls.push([...args]);
        seen.push(readdirSync(r.dir).includes('cronix-billing_settle-0.timer'));
        return { code: 0, stdout: '', stderr: '' };
      },
    });
    await reconcile({ ...r, backend }, manifest([{ name: 'report' }]));
    expect(r.calls).toEqual([
      ['disable', '--now', 'cronix-billing_settle-0.timer'],
      ['daemon-reload'],
      ['enable', '--now', 'cronix-billing_report-0.timer'],
    ]);
    expect(seen[0]).toBe(true); // disabled while its file still existed
    expect(readdirSync(r.dir)).not.toContain('cronix-billing_settle-0.service');
  });

  it('an empty change set touches nothing, not even a missing unit dir', async () => {
    const r = makeBackend({ systemdUnitDir: join(tmpdir(), `cronix-absent-${process.pid}`, 'x') });
    await r.backend.apply({ deletes: [], updates: [], creates: [] });
    expect(r.calls).toEqual([]);
    expect(await r.backend.list()).toEqual([]);
  });

  it('without systemd: writes the files, runs nothing, and leaves a notice naming the commands', async () => {
    const r = makeBackend({}, false);
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(r.calls).toEqual([]);
    expect(readdirSync(r.dir)).toContain('cronix-billing_settle-0.timer');
    expect(r.backend.notices).toHaveLength(1);
    expect(r.backend.notices[0]).toMatch(/systemd is not running/);
    expect(r.backend.notices[0]).toContain('systemctl enable --now cronix-billing_settle-0.timer');
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(r.backend.notices).toHaveLength(1); // nothing changed: no new notice
  });

  it('uses systemctl --user for a user unit dir', async () => {
    const base = mkdtempSync(join(tmpdir(), 'cronix-home-'));
    dirs.push(base);
    const r = makeBackend({ systemdUnitDir: join(base, '.config/systemd/user') });
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(r.calls[0]).toEqual(['--user', 'daemon-reload']);
  });
});

describe('systemd backend: ownership', () => {
  it('a hand-edited unit is listed as modified and rewritten', async () => {
    const r = makeBackend();
    const m = manifest([{ name: 'settle' }]);
    await reconcile(r, m);
    const path = join(r.dir, 'cronix-billing_settle-0.service');
    const original = readFileSync(path, 'utf8');
    writeFileSync(path, original.replace('TimeoutStartSec=213', 'TimeoutStartSec=5'));
    expect((await r.backend.list('billing'))[0]?.modified).toBe('edited by hand');
    await reconcile(r, m);
    expect(readFileSync(path, 'utf8')).toBe(original);
  });

  it('units installed with another --trigger-bin are listed as modified', async () => {
    const r = makeBackend();
    await reconcile(r, manifest([{ name: 'settle' }]));
    const other = createSystemdBackend({
      systemdUnitDir: r.dir,
      triggerCommand: ['/opt/cronix/bin/cronix'],
      shimArgs: SHIM_ARGS,
      systemdRunning: () => false,
      now: () => NOW,
    });
    expect((await other.list())[0]?.modified).toMatch(/--trigger-bin/);
  });

  it('a lone timer (service deleted by hand) is listed as modified, then completed', async () => {
    const r = makeBackend();
    await reconcile(r, manifest([{ name: 'settle' }]));
    rmSync(join(r.dir, 'cronix-billing_settle-0.service'));
    expect((await r.backend.list())[0]?.modified).toBe('service file missing');
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(readdirSync(r.dir)).toContain('cronix-billing_settle-0.service');
  });

  it('a foreign file under one of our names is refused at plan time and never overwritten', async () => {
    const r = makeBackend();
    const m = manifest([{ name: 'job' }], 'legacy');
    const [entry] = desiredEntries(m);
    expect(r.backend.refuse(entry!).join('; ')).toMatch(
      /cronix-legacy_job-0\.timer exists but carries no cronix marker/,
    );
    await expect(
      r.backend.apply({ deletes: [], updates: [], creates: [entry!] }),
    ).rejects.toBeInstanceOf(BackendWriteError);
    expect(readFileSync(join(r.dir, 'cronix-legacy_job-0.timer'), 'utf8')).toBe(
      FOREIGN['cronix-legacy_job-0.timer'],
    );
    expect(readdirSync(r.dir)).not.toContain('cronix-legacy_job-0.service');
    expect(r.calls).toEqual([]);
  });

  it('app a + job b-c and app a-b + job c get different unit names (once both cronix-a-b-c-0)', async () => {
    const r = makeBackend();
    await reconcile(r, manifest([{ name: 'sync' }], 'shop-eu'));
    await reconcile(r, manifest([{ name: 'eu-sync' }], 'shop'));
    expect(readdirSync(r.dir)).toEqual(
      expect.arrayContaining(['cronix-shop-eu_sync-0.timer', 'cronix-shop_eu-sync-0.timer']),
    );
    expect((await r.backend.list('shop')).map((e) => e.job)).toEqual(['eu-sync']);
    expect((await r.backend.list('shop-eu')).map((e) => e.job)).toEqual(['sync']);
    expect((await r.backend.list()).every((e) => e.modified === undefined)).toBe(true);
  });

  it('units under the old name are listed modified and renamed by apply, the new timer enabled before the old one goes', async () => {
    const r = makeBackend();
    await reconcile(r, manifest([{ name: 'settle' }]));
    // what an older cronix wrote: the same files under cronix-<app>-<job>-<index>
    for (const ext of ['service', 'timer']) {
      const text = readFileSync(join(r.dir, `cronix-billing_settle-0.${ext}`), 'utf8');
      rmSync(join(r.dir, `cronix-billing_settle-0.${ext}`));
      writeFileSync(join(r.dir, `cronix-billing-settle-0.${ext}`), text);
    }
    expect(await r.backend.list('billing')).toEqual([
      expect.objectContaining({
        id: 'cronix-billing-settle-0',
        modified: 'old unit name cronix-billing-settle-0 (renamed to cronix-billing_settle-0)',
      }),
    ]);
    r.calls.length = 0;
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(r.calls).toEqual([
      ['daemon-reload'],
      ['enable', '--now', 'cronix-billing_settle-0.timer'],
      ['disable', '--now', 'cronix-billing-settle-0.timer'],
      ['daemon-reload'],
    ]);
    const names = readdirSync(r.dir);
    expect(names).toContain('cronix-billing_settle-0.timer');
    expect(names).not.toContain('cronix-billing-settle-0.timer');
    expect(names).not.toContain('cronix-billing-settle-0.service');
    r.calls.length = 0;
    await reconcile(r, manifest([{ name: 'settle' }]));
    expect(r.calls).toEqual([]);
  });

  it('quotes and escapes ExecStart arguments (spaces, %, $)', async () => {
    const r = makeBackend({
      triggerCommand: ['/opt/my tools/cronix'],
      shimArgs: ['--spec-dir', '/srv/100%/$jobs'],
    });
    await reconcile(r, manifest([{ name: 'settle' }]));
    const text = readFileSync(join(r.dir, 'cronix-billing_settle-0.service'), 'utf8');
    expect(text).toContain(
      'ExecStart="/opt/my tools/cronix" trigger billing.settle --spec-dir /srv/100%%/$$jobs\n',
    );
  });
});

describe('systemd backend: reports (SPEC §15)', () => {
  it('cronix apply --report-to renders the flag into ExecStart; units without it are modified', async () => {
    const options = backendOptionsOf(
      {
        output: 'table',
        backend: 'systemd',
        secretRef: [],
        cronUser: 'root',
        triggerBin: process.execPath,
        specDir: '/etc/cronix/jobs',
        reportTo: 'https://watch.example.com/cronix',
        reportSecretRef: ['file:/etc/cronix/report-secret'],
      },
      {},
    );
    expect(options.report).toEqual({
      url: 'https://watch.example.com/cronix',
      secretRefs: ['file:/etc/cronix/report-secret'],
    });
    const plain = makeBackend();
    await reconcile(plain, manifest([{ name: 'settle' }]));
    const r = makeBackend({
      systemdUnitDir: plain.dir,
      triggerCommand: TRIGGER,
      shimArgs: options.shimArgs,
    });
    expect((await r.backend.list('billing'))[0]?.modified).toMatch(/shim flags/);
    await reconcile(r, manifest([{ name: 'settle' }]));
    const text = readFileSync(join(plain.dir, 'cronix-billing_settle-0.service'), 'utf8');
    expect(text).toContain(
      `ExecStart=/usr/local/bin/cronix trigger billing.settle --spec-dir /etc/cronix/jobs --report-to https://watch.example.com/cronix\n`,
    );
    expect((await r.backend.list('billing'))[0]?.modified).toBeUndefined();
  });
});

describe('systemd backend: errors', () => {
  it('a failing systemctl is a write error; a missing bus is unreachable', async () => {
    const fail =
      (stderr: string): SystemctlRunner =>
      async () => ({ code: 1, stdout: '', stderr });
    const a = makeBackend({ systemctl: fail('Failed to enable unit: Access denied') });
    const err = await reconcile(a, manifest([{ name: 'settle' }])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendWriteError);
    expect((err as Error).message).toMatch(
      /Access denied; the unit files in .* are written — finish with: systemctl daemon-reload && systemctl enable --now cronix-billing_settle-0\.timer$/,
    );
    const b = makeBackend({
      systemctl: fail('Failed to connect to bus: No such file or directory'),
    });
    await expect(reconcile(b, manifest([{ name: 'settle' }]))).rejects.toBeInstanceOf(
      BackendUnreachableError,
    );
  });

  it('an unwritable unit dir is a write error that names the flag, and nothing is written', async () => {
    const base = mkdtempSync(join(tmpdir(), 'cronix-ro-'));
    dirs.push(base);
    writeFileSync(join(base, 'file'), 'not a directory');
    const r = makeBackend({ systemdUnitDir: join(base, 'file', 'units') });
    const err = await reconcile(r, manifest([{ name: 'settle' }])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendWriteError);
    expect((err as Error).message).toMatch(/--systemd-unit-dir.*nothing was changed/);
    expect(r.calls).toEqual([]);
  });
});
