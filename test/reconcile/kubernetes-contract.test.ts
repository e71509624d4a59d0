/**
 * The shared backend contract suite on the Kubernetes backend, in both modes: direct apply
 * against the fake API server (seeded with foreign CronJobs and ConfigMaps), and render-only
 * YAML into a file (seeded with foreign documents). Plus the stdout render.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createKubernetesBackend } from '../../src/reconcile/backends/kubernetes.js';
import { renderEntry } from '../../src/reconcile/backends/kubernetes-render.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { FakeKube, foreignCronJob, type KubeObject } from '../helpers/fake-kube.js';
import { backendContract, contractManifest, reconcileWith } from './contract.js';

const FLAGS = { k8sImage: 'ghcr.io/acme/cronix:1.2.3', k8sSecret: 'cron-secrets' };
const NOW = () => Date.UTC(2026, 0, 1);
const tmp = (): string => mkdtempSync(join(tmpdir(), 'cronix-k8s-contract-'));

backendContract(
  'kubernetes (API server)',
  async () => {
    const fake = await FakeKube.start();
    const seeded: [string, string, KubeObject][] = [
      ['cronjobs', 'jobs', fake.seed('cronjobs', 'jobs', foreignCronJob('nightly-backup', {}))],
      [
        'cronjobs',
        'jobs',
        fake.seed(
          'cronjobs',
          'jobs',
          foreignCronJob('lookalike', { 'cronix.dev/managed': 'false' }),
        ),
      ],
      [
        'configmaps',
        'jobs',
        fake.seed('configmaps', 'jobs', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'billing.settle.json', labels: { 'cronix.dev/app': 'billing' } },
          data: { 'billing.settle.json': '{}' },
        }),
      ],
    ];
    const dir = tmp();
    const backend = createKubernetesBackend(
      { ...FLAGS, k8sNamespace: 'jobs', kubeconfig: fake.writeKubeconfig(dir) },
      { now: NOW },
    );
    return {
      backend,
      raw: async () => fake.dump(),
      stamp: async () => String(fake.writes().length),
      assertForeignIntact: async () => {
        for (const [res, ns, obj] of seeded) {
          expect(fake.get(res as 'cronjobs', ns, obj.metadata.name)).toEqual(obj);
        }
      },
      close: async () => {
        await fake.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { seconds: 'refuse' },
);

const FOREIGN_YAML = `# platform team: do not remove
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2   # keep this comment
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-backup
spec:
  schedule: "0 1 * * *"
`;

backendContract(
  'kubernetes (render-only YAML file)',
  async () => {
    const dir = tmp();
    const file = join(dir, 'cronix.yaml');
    writeFileSync(file, FOREIGN_YAML);
    const backend = createKubernetesBackend({ ...FLAGS, k8sRender: file }, { now: NOW });
    return {
      backend,
      raw: async () => readFileSync(file, 'utf8'),
      stamp: async () => {
        const s = statSync(file);
        return `${s.mtimeMs} ${s.ino} ${s.ctimeMs}`;
      },
      assertForeignIntact: async () => {
        const text = readFileSync(file, 'utf8');
        for (const doc of FOREIGN_YAML.split('---\n')) expect(text).toContain(doc);
      },
      close: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  { seconds: 'refuse' },
);

describe('render-only YAML', () => {
  it('a render file holds exactly the rendered objects after our marker, foreign documents first', async () => {
    const dir = tmp();
    const file = join(dir, 'cronix.yaml');
    writeFileSync(file, FOREIGN_YAML);
    const backend = createKubernetesBackend({ ...FLAGS, k8sRender: file }, { now: NOW });
    const manifest = contractManifest('billing', [{ name: 'settle' }, { name: 'report' }]);
    await reconcileWith(backend, manifest);
    const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON() as KubeObject);
    expect(docs.slice(0, 2).map((d) => d.metadata.name)).toEqual(['web', 'nightly-backup']);
    const flags = { image: FLAGS.k8sImage, secret: FLAGS.k8sSecret };
    expect(docs.slice(2)).toEqual(
      desiredEntries(manifest).flatMap((e) => {
        const r = renderEntry(e, flags);
        return [r.configMap, r.cronJob];
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it('to stdout: nothing is installed, apply prints every entry of the plan as YAML', async () => {
    let out = '';
    const backend = createKubernetesBackend(
      { ...FLAGS, k8sNamespace: 'jobs', k8sRender: true },
      { now: NOW, stdout: { write: (t: string) => (out += t) } },
    );
    expect(backend.target).toBe('YAML on stdout');
    expect(backend.localSpecFiles).toBe(false);
    const p = await reconcileWith(backend, contractManifest('billing', [{ name: 'settle' }]));
    expect(p.creates).toHaveLength(1);
    const docs = parseAllDocuments(out).map((d) => d.toJSON() as KubeObject);
    expect(docs.map((d) => `${d.kind} ${d.metadata.namespace}/${d.metadata.name}`)).toEqual([
      'ConfigMap jobs/cronix-billing-settle-0',
      'CronJob jobs/cronix-billing-settle-0',
    ]);
    expect(await backend.list()).toEqual([]);
  });
});
