/**
 * `cronix adopt` (SPEC §14): entries installed by the public cronix reconciler, in its exact
 * formats, become ours in one step, and a `plan` afterwards shows no changes.
 * - crontab: `<cron> <bin> trigger <app>.<job>` followed by
 *   `# cronix:owned app=<app> job=<job> hash=<16 hex> idx=<n>` (awbx/cronix crontab/render.go);
 * - systemd: `cronix-<app>-<job>-<idx>.{service,timer}` with `X-Cronix-App/Job/Index/Hash=`
 *   keys in `[Unit]` (awbx/cronix systemd/templates).
 * The crontab cases run the built binary (`npm run build` first).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adoptReconcile, planReconcile } from '../../src/reconcile/apply.js';
import { createSystemdBackend } from '../../src/reconcile/backends/systemd.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { cronixAsync, manifestOf, workspace } from './cli-helpers.js';

const env = { ...process.env, CRON_SECRET: 'x' };

const FOREIGN = '# my own job\n0 1 * * * /usr/bin/backup\nMAILTO=ops@example.com\n';
const PUBLIC_CRONTAB =
  FOREIGN +
  '*/10 * * * * /usr/local/bin/cronix trigger billing.settle\n' +
  '# cronix:owned app=billing job=settle hash=eefe2dd0dcf563e2 idx=0\n' +
  '*/10 * * * * /usr/local/bin/cronix trigger billing.gone\n' +
  '# cronix:owned app=billing job=gone hash=0123456789abcdef idx=0\n' +
  '0 * * * * /usr/local/bin/cronix trigger other.job\n' +
  '# cronix:owned app=other job=job hash=fedcba9876543210 idx=0\n';

describe('cronix adopt --backend crontab', () => {
  it('rewrites the public markers as ours in one write; plan then shows no changes', async () => {
    const ws = workspace();
    writeFileSync(ws.crontab, PUBLIC_CRONTAB);
    const m = ws.manifest(manifestOf('billing', ['settle']));

    const dry = await cronixAsync(['adopt', m, ...ws.flags, '--dry-run', '-o', 'json'], env);
    expect(dry.status).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      adopted: ['cronix-billing-settle-0'],
      removed: ['cronix-billing-gone-0'],
      dry_run: true,
    });
    expect(readFileSync(ws.crontab, 'utf8')).toBe(PUBLIC_CRONTAB);

    const r = await cronixAsync(['adopt', m, ...ws.flags, '-o', 'json'], env);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { plan_after: { summary: Record<string, number> } };
    expect(out.plan_after.summary).toEqual({
      create: 0,
      update: 0,
      delete: 0,
      unchanged: 1,
      refused: 0,
    });

    const text = readFileSync(ws.crontab, 'utf8');
    expect(text.startsWith(FOREIGN)).toBe(true); // foreign lines byte for byte
    expect(text).not.toMatch(/cronix:owned app=billing/);
    expect(text).toContain('# cronix:owned app=other job=job'); // another app's: untouched
    expect(text).toMatch(/# cronix:v1 app=billing job=settle index=0 hash=[0-9a-f]{16} sum=/);
    expect(text.match(/trigger billing\.settle/g)).toHaveLength(1); // never both
    expect(readdirSync(ws.specDir)).toContain('billing.settle.json');

    const plan = await cronixAsync(['plan', m, ...ws.flags, '-o', 'json'], env);
    expect(plan.status).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({
      changed: false,
      summary: { create: 0, update: 0, delete: 0, unchanged: 1, refused: 0 },
    });
  });

  it('an unknown backend for adopt is a usage error naming the flag', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle']));
    const r = await cronixAsync(['adopt', m, ...ws.flags, '--backend', 'cron'], env);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--backend/);
  });
});

const serviceOf = (app: string, job: string, idx: number): string =>
  `[Unit]\nDescription=cronix: ${app}.${job} (idx=${idx})\nAfter=network-online.target\n` +
  `X-Cronix-App=${app}\nX-Cronix-Job=${job}\nX-Cronix-Index=${idx}\nX-Cronix-Hash=abc123def4567890\n\n` +
  `[Service]\nType=oneshot\nExecStart=/usr/local/bin/cronix trigger ${app}.${job}\nRuntimeMaxSec=210\n`;
const timerOf = (app: string, job: string, idx: number): string =>
  `[Unit]\nDescription=cronix timer: ${app}.${job} (idx=${idx})\nPartOf=cronix-${app}-${job}-${idx}.service\n` +
  `X-Cronix-App=${app}\nX-Cronix-Job=${job}\nX-Cronix-Index=${idx}\nX-Cronix-OnCalendar=*-*-* *:00/10:00\n` +
  `X-Cronix-Hash=abc123def4567890\n\n[Timer]\nOnCalendar=*-*-* *:00/10:00\nUnit=cronix-${app}-${job}-${idx}.service\n` +
  'Persistent=true\n\n[Install]\nWantedBy=timers.target\n';

describe('cronix adopt --backend systemd', () => {
  it('replaces the public units: their timer first starts our service, then ours is enabled before theirs goes; plan then shows no changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-adopt-'));
    const specDir = join(dir, 'jobs');
    const units = join(dir, 'units');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(units);
    for (const [app, job] of [
      ['billing', 'settle'],
      ['billing', 'gone'],
      ['other', 'job'],
    ] as const) {
      writeFileSync(join(units, `cronix-${app}-${job}-0.service`), serviceOf(app, job, 0));
      writeFileSync(join(units, `cronix-${app}-${job}-0.timer`), timerOf(app, job, 0));
    }
    const calls: string[][] = [];
    const states: Record<string, boolean | null>[] = [];
    const backend = createSystemdBackend({
      systemdUnitDir: units,
      triggerCommand: ['/usr/local/bin/cronix'],
      shimArgs: ['--spec-dir', specDir],
      systemdRunning: () => true,
      systemctl: async (args) => {
        calls.push([...args]);
        // at every step exactly one enabled timer (or unit file set) fires settle, and which one
        const names = readdirSync(units);
        states.push({
          theirTimer: names.includes('cronix-billing-settle-0.timer'),
          ourTimer: names.includes('cronix-billing_settle-0.timer'),
          theirServiceRunsOurs: names.includes('cronix-billing-settle-0.service')
            ? readFileSync(join(units, 'cronix-billing-settle-0.service'), 'utf8').startsWith(
                '# cronix:v1 ',
              )
            : null,
        });
        return { code: 0, stdout: '', stderr: '' };
      },
    });
    const parsed = parseManifest(manifestOf('billing', ['settle']));
    if (!parsed.ok) throw new Error('bad manifest');
    const desired = desiredEntries(parsed.manifest);

    // before: the public units are not ours, so a plain plan would create beside them
    expect(await backend.list('billing')).toEqual([]);
    const r = await adoptReconcile(desired, backend, { app: 'billing', specDir });
    expect(r.report).toEqual({
      adopted: ['cronix-billing-settle-0'],
      removed: ['cronix-billing-gone-0'],
    });
    expect(calls).toEqual([
      ['daemon-reload'], // step 1: their timer now starts our service (see `states`)
      ['daemon-reload'],
      ['enable', '--now', 'cronix-billing_settle-0.timer'],
      ['disable', '--now', 'cronix-billing-gone-0.timer', 'cronix-billing-settle-0.timer'],
      ['daemon-reload'],
    ]);
    expect(states[0]).toEqual({ theirTimer: true, ourTimer: false, theirServiceRunsOurs: true });
    expect(states[2]).toMatchObject({ theirTimer: true, ourTimer: true }); // enable ours first
    expect(states[3]).toMatchObject({ theirTimer: true, ourTimer: true }); // then disable theirs
    expect(states[4]).toMatchObject({ theirTimer: false, ourTimer: true });
    expect(readdirSync(units).sort()).toEqual([
      'cronix-billing_settle-0.service',
      'cronix-billing_settle-0.timer',
      'cronix-other-job-0.service', // another app's: untouched
      'cronix-other-job-0.timer',
    ]);
    expect(r.after.plan.creates).toEqual([]);

    const after = await planReconcile(desired, backend, { app: 'billing', specDir });
    expect(after.plan.creates.length + after.plan.updates.length + after.plan.deletes.length).toBe(
      0,
    );
    expect(after.plan.unchanged).toHaveLength(1);
    expect(after.specFiles.write).toEqual([]);
  });
});

describe('cronix adopt --backend kubernetes', () => {
  it('replaces the public CronJob and ConfigMap in place (PUT, never DELETE); plan then shows no changes', async () => {
    const { FakeKube, foreignCronJob } = await import('../helpers/fake-kube.js');
    const { createKubernetesBackend } = await import('../../src/reconcile/backends/kubernetes.js');
    const fake = await FakeKube.start();
    try {
      const kubeconfig = fake.writeKubeconfig(mkdtempSync(join(tmpdir(), 'cronix-adopt-k8s-')));
      // the public reconciler's labels (awbx/cronix: cronix.dev/managed, app, job, hash, index)
      const labels = {
        'cronix.dev/managed': 'true',
        'cronix.dev/app': 'billing',
        'cronix.dev/job': 'settle',
        'cronix.dev/index': '0',
        'cronix.dev/hash': 'abc123def4567890',
      };
      fake.seed('cronjobs', 'jobs', foreignCronJob('cronix-billing-settle-0', labels));
      fake.seed('configmaps', 'jobs', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cronix-billing-settle-0', labels },
        data: { 'billing.settle.json': '{}' },
      });
      const backend = createKubernetesBackend(
        { k8sNamespace: 'jobs', k8sImage: 'ghcr.io/acme/cronix:1', k8sSecret: 's', kubeconfig },
        { now: () => Date.UTC(2026, 0, 1) },
      );
      const parsed = parseManifest(manifestOf('billing', ['settle']));
      if (!parsed.ok) throw new Error('bad manifest');
      const desired = desiredEntries(parsed.manifest);
      const r = await adoptReconcile(desired, backend, { app: 'billing', specDir: '/unused' });
      expect(r.report).toEqual({ adopted: ['cronix-billing-settle-0'], removed: [] });
      const writes = fake.writes().map((w) => `${w.method} ${w.path}`);
      expect(writes.some((w) => w.startsWith('PUT') && w.includes('cronjobs'))).toBe(true);
      expect(writes.some((w) => w.startsWith('DELETE'))).toBe(false);
      const after = await planReconcile(desired, backend, { app: 'billing', specDir: '/unused' });
      expect(
        after.plan.creates.length + after.plan.updates.length + after.plan.deletes.length,
      ).toBe(0);
    } finally {
      await fake.close();
    }
  });
});
