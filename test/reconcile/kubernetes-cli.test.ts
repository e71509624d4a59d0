/**
 * `cronix plan/apply/drift --backend kubernetes` end to end: the built binary against the fake
 * API server (exit codes of SPEC §6, no write on a second apply, render-only YAML to a file).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { FakeKube } from '../helpers/fake-kube.js';
import { cronixAsync, manifestOf, workspace, type Workspace } from './cli-helpers.js';

let fake: FakeKube;
let ws: Workspace;
let k8s: string[];

beforeEach(async () => {
  fake = await FakeKube.start();
  ws = workspace();
  k8s = [
    '--backend',
    'kubernetes',
    '--kubeconfig',
    fake.writeKubeconfig(ws.dir),
    '--k8s-namespace',
    'jobs',
    '--k8s-image',
    'ghcr.io/acme/cronix:1.2.3',
    '--k8s-secret',
    'cron-secrets',
    '--spec-dir',
    ws.specDir,
  ];
});
afterEach(async () => {
  await fake.close();
});

describe('cronix --backend kubernetes', () => {
  it('plans, applies, and a second apply sends no write', async () => {
    const manifest = ws.manifest(manifestOf('billing', ['settle', 'report']));
    const plan = await cronixAsync(['plan', manifest, ...k8s, '-o', 'json']);
    expect(plan.status, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).summary).toMatchObject({ create: 2, refused: 0 });
    expect(fake.writes()).toEqual([]);

    const apply = await cronixAsync(['apply', manifest, ...k8s]);
    expect(apply.status, apply.stderr).toBe(0);
    expect([...fake.objects.keys()].sort()).toEqual([
      'configmaps/jobs/cronix-billing-report-0',
      'configmaps/jobs/cronix-billing-settle-0',
      'cronjobs/jobs/cronix-billing-report-0',
      'cronjobs/jobs/cronix-billing-settle-0',
    ]);
    // the spec lives in the ConfigMaps: nothing in the local spec dir but the apply lock
    const local = existsSync(ws.specDir) ? readdirSync(ws.specDir) : [];
    expect(local.filter((f) => f.endsWith('.json'))).toEqual([]);

    const writes = fake.writes().length;
    const again = await cronixAsync(['apply', manifest, ...k8s]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/^info: /m);
    expect(fake.writes()).toHaveLength(writes);

    const drift = await cronixAsync(['drift', manifest, ...k8s, '--exit-on-drift']);
    expect(drift.status, drift.stderr).toBe(0);
  });

  it('an unreachable API server exits 3', async () => {
    const manifest = ws.manifest(manifestOf('billing', ['settle']));
    await fake.close();
    const r = await cronixAsync(['plan', manifest, ...k8s]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/cannot reach the Kubernetes API server/);
    fake = await FakeKube.start(); // for afterEach
  });

  it('a schedule robfig/cron cannot express is refused: exit 1, nothing written', async () => {
    const manifest = ws.manifest({
      ...manifestOf('billing', []),
      jobs: [
        {
          name: 'settle',
          schedule: '0 0 */2 * MON',
          request: { url: 'https://billing.example.internal/settle' },
          auth: { secret_refs: ['env:CRON_SECRET'] },
        },
      ],
    });
    const r = await cronixAsync(['apply', manifest, ...k8s]);
    expect(r.status).toBe(1);
    expect(r.stderr + r.stdout).toMatch(/robfig\/cron treats only a bare "\*" as a wildcard/);
    expect(fake.writes()).toEqual([]);
  });

  it('--k8s-render FILE writes the objects as YAML and no API request is made', async () => {
    const manifest = ws.manifest(manifestOf('billing', ['settle']));
    const file = join(ws.dir, 'cronix.yaml');
    const flags = k8s.filter((_, i) => k8s[i - 1] !== '--kubeconfig' && k8s[i] !== '--kubeconfig');
    const r = await cronixAsync(['apply', manifest, ...flags, '--k8s-render', file]);
    expect(r.status, r.stderr).toBe(0);
    const kinds = parseAllDocuments(readFileSync(file, 'utf8')).map(
      (d) => (d.toJSON() as { kind: string }).kind,
    );
    expect(kinds).toEqual(['ConfigMap', 'CronJob']);
    expect(fake.requests).toEqual([]);
  });
});
