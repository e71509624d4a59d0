/**
 * Direct apply through the official client (@kubernetes/client-node) against a local server
 * that plays the API server and records every request: what is sent, that an unchanged apply
 * sends no write, that foreign objects are never touched, drift detection, and the error
 * mapping (unreachable, timeout, credentials, an API server that drops `timeZone`).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BackendConfigError,
  BackendUnreachableError,
  BackendWriteError,
} from '../../src/reconcile/backend.js';
import {
  createKubernetesBackend,
  type KubernetesBackend,
} from '../../src/reconcile/backends/kubernetes.js';
import { renderEntry } from '../../src/reconcile/backends/kubernetes-render.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { changeSetOf, plan } from '../../src/reconcile/plan.js';
import { FakeKube, foreignCronJob, type KubeObject } from '../helpers/fake-kube.js';
import { contractManifest, reconcileWith } from './contract.js';
import { freePort } from '../helpers/common.js';

const NS = 'jobs';
const FLAGS = {
  k8sNamespace: NS,
  k8sImage: 'ghcr.io/acme/cronix:1.2.3',
  k8sSecret: 'cron-secrets',
};
const NOW = () => Date.UTC(2026, 0, 1);
const CJ = `/apis/batch/v1/namespaces/${NS}/cronjobs`;
const CM = `/api/v1/namespaces/${NS}/configmaps`;

let fake: FakeKube;
let kubeconfig: string;
let backend: KubernetesBackend;
const tmp = (): string => mkdtempSync(join(tmpdir(), 'cronix-k8s-'));
const calls = (): string[] => fake.requests.map((r) => `${r.method} ${r.path}`);
const billing = (jobs: Parameters<typeof contractManifest>[1] = [{ name: 'settle' }]) =>
  contractManifest('billing', jobs);

beforeEach(async () => {
  fake = await FakeKube.start();
  kubeconfig = fake.writeKubeconfig(tmp());
  backend = createKubernetesBackend({ ...FLAGS, kubeconfig }, { now: NOW });
});
afterEach(async () => {
  await fake.close();
});

describe('direct apply through the API server', () => {
  it('creates ConfigMap then CronJob per entry, sending exactly the rendered objects', async () => {
    const manifest = billing();
    await reconcileWith(backend, manifest);
    expect(calls()).toEqual([
      `GET ${CJ}`,
      `GET ${CM}`,
      `GET ${CM}/cronix-billing-settle-0`,
      `GET ${CJ}/cronix-billing-settle-0`,
      `POST ${CM}`,
      `POST ${CJ}`,
    ]);
    expect(fake.requests[0]?.query).toEqual({
      labelSelector: 'cronix.dev/managed=true,cronix.dev/app=billing',
      limit: '500',
    });
    const [entry] = desiredEntries(manifest);
    const rendered = renderEntry(entry!, {
      namespace: NS,
      image: FLAGS.k8sImage,
      secret: FLAGS.k8sSecret,
    });
    expect(fake.requests[4]?.body).toEqual(rendered.configMap);
    expect(fake.requests[5]?.body).toEqual(rendered.cronJob);
    expect(await backend.list('billing')).toEqual([
      {
        id: 'cronix-billing-settle-0',
        app: 'billing',
        job: 'settle',
        scheduleIndex: 0,
        hash: entry!.hash,
      },
    ]);
  });

  it('an unchanged apply sends no write request, even when handed the same creates again', async () => {
    const manifest = billing([{ name: 'settle' }, { name: 'report' }]);
    await reconcileWith(backend, manifest);
    const before = fake.dump();
    fake.requests.length = 0;
    const again = await reconcileWith(backend, manifest);
    expect(again.unchanged).toHaveLength(2);
    expect(calls()).toEqual([`GET ${CJ}`, `GET ${CM}`]);
    await backend.apply({ deletes: [], updates: [], creates: desiredEntries(manifest) });
    expect(fake.writes()).toEqual([]);
    expect(fake.dump()).toBe(before);
    fake.requests.length = 0;
    await backend.apply({ deletes: [], updates: [], creates: [] });
    expect(fake.requests).toEqual([]); // an empty change set makes no API call at all
  });

  it('updates with PUT carrying the live resourceVersion, and deletes CronJob then ConfigMap', async () => {
    await reconcileWith(backend, billing([{ name: 'settle' }, { name: 'report' }]));
    const rv = fake.get('cronjobs', NS, 'cronix-billing-settle-0')?.metadata['resourceVersion'];
    fake.requests.length = 0;
    await reconcileWith(backend, billing([{ name: 'settle', schedules: ['5 4 * * *'] }]));
    const writes = fake.writes();
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual([
      `DELETE ${CJ}/cronix-billing-report-0`,
      `DELETE ${CM}/cronix-billing-report-0`,
      `PUT ${CM}/cronix-billing-settle-0`,
      `PUT ${CJ}/cronix-billing-settle-0`,
    ]);
    expect(writes[0]?.query).toEqual({ propagationPolicy: 'Background' });
    const put = writes[3]?.body as KubeObject;
    expect(put.metadata['resourceVersion']).toBe(rv);
    expect(put['spec']).toMatchObject({ schedule: '5 4 * * *', timeZone: 'UTC' });
    expect(fake.get('cronjobs', NS, 'cronix-billing-report-0')).toBeUndefined();
  });

  it('never modifies or deletes objects without cronix.dev/managed=true', async () => {
    const seeded = [
      fake.seed('cronjobs', NS, foreignCronJob('nightly-backup', {})),
      fake.seed(
        'cronjobs',
        NS,
        foreignCronJob('lookalike', { 'cronix.dev/managed': 'false', 'cronix.dev/app': 'billing' }),
      ),
      fake.seed('configmaps', NS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'app-config' },
        data: { a: '1' },
      }),
      fake.seed(
        'cronjobs',
        'other',
        foreignCronJob('cronix-billing-old-0', markerOf('billing', 'old')),
      ),
    ];
    await reconcileWith(backend, billing([{ name: 'settle' }, { name: 'report' }]));
    await reconcileWith(backend, billing([{ name: 'report' }]));
    await reconcileWith(backend, billing());
    expect(
      fake
        .writes()
        .every((r) => /\/cronix-billing-(settle|report)-0$|\/(cronjobs|configmaps)$/.test(r.path)),
    ).toBe(true);
    expect(fake.writes().some((r) => r.path.includes('/namespaces/other/'))).toBe(false);
    for (const s of seeded) {
      const ns = s.metadata.namespace as string;
      const res = s.kind === 'CronJob' ? 'cronjobs' : 'configmaps';
      expect(fake.get(res, ns, s.metadata.name)).toEqual(s);
    }
    expect((await backend.list()).map((e) => e.id)).toEqual(['cronix-billing-settle-0']);
  });

  it('refuses to overwrite a foreign object with our name, and writes nothing for that entry', async () => {
    const foreign = fake.seed('cronjobs', NS, foreignCronJob('cronix-billing-settle-0', {}));
    const p = plan(desiredEntries(billing()), await backend.list('billing'), backend);
    await expect(backend.apply(changeSetOf(p))).rejects.toThrow(BackendWriteError);
    await expect(backend.apply(changeSetOf(p))).rejects.toThrow(
      /not managed by cronix.*will not overwrite/,
    );
    expect(fake.writes()).toEqual([]);
    expect(fake.get('cronjobs', NS, 'cronix-billing-settle-0')).toEqual(foreign);
  });
});

describe('drift: an installed pair that is not what cronix renders is reported modified', () => {
  it('a hand-edited CronJob is rewritten by the next apply', async () => {
    await reconcileWith(backend, billing());
    const cj = fake.get('cronjobs', NS, 'cronix-billing-settle-0') as KubeObject;
    type Spec = {
      jobTemplate: { spec: { template: { spec: { containers: { image: string }[] } } } };
    };
    const containers = (cj['spec'] as Spec).jobTemplate.spec.template.spec.containers;
    containers[0]!.image = 'evil:latest';
    const [owned] = await backend.list('billing');
    expect(owned?.modified).toBe(
      'CronJob spec.jobTemplate.spec.template.spec.containers[0].image differs',
    );
    fake.requests.length = 0;
    const p = await reconcileWith(backend, billing());
    expect(p.updates.map((u) => u.reason)).toEqual([owned?.modified]);
    expect(fake.writes().map((r) => `${r.method} ${r.path}`)).toEqual([
      `PUT ${CJ}/cronix-billing-settle-0`,
    ]);
    expect(await backend.list('billing')).toEqual([
      expect.not.objectContaining({ modified: expect.anything() }),
    ]);
  });

  it('a deleted spec ConfigMap is recreated without touching the CronJob', async () => {
    await reconcileWith(backend, billing());
    fake.objects.delete(`configmaps/${NS}/cronix-billing-settle-0`);
    expect((await backend.list('billing'))[0]?.modified).toBe('spec ConfigMap missing');
    fake.requests.length = 0;
    await reconcileWith(backend, billing());
    expect(fake.writes().map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${CM}`]);
  });

  it('a ConfigMap left without its CronJob is listed, then completed or removed', async () => {
    await reconcileWith(backend, billing([{ name: 'settle' }, { name: 'report' }]));
    fake.objects.delete(`cronjobs/${NS}/cronix-billing-settle-0`);
    fake.objects.delete(`cronjobs/${NS}/cronix-billing-report-0`);
    expect((await backend.list('billing')).map((e) => `${e.id}: ${e.modified}`)).toEqual([
      'cronix-billing-report-0: CronJob missing',
      'cronix-billing-settle-0: CronJob missing',
    ]);
    await reconcileWith(backend, billing([{ name: 'settle' }]));
    expect(fake.get('cronjobs', NS, 'cronix-billing-settle-0')).toBeDefined();
    expect(fake.get('configmaps', NS, 'cronix-billing-report-0')).toBeUndefined();
    expect((await backend.list('billing')).map((e) => e.modified)).toEqual([undefined]);
  });

  it('list without --k8s-image / --k8s-secret takes them from the live objects (no false drift)', async () => {
    await reconcileWith(backend, billing());
    const bare = createKubernetesBackend({ kubeconfig, k8sNamespace: NS }, { now: NOW });
    expect((await bare.list('billing'))[0]?.modified).toBeUndefined();
    const other = createKubernetesBackend({
      ...FLAGS,
      kubeconfig,
      k8sImage: 'ghcr.io/acme/cronix:2.0.0',
    });
    expect((await other.list('billing'))[0]?.modified).toMatch(/containers\[0\]\.image differs/);
  });
});

describe('errors', () => {
  it('an API server that drops spec.timeZone (Kubernetes < 1.27) fails the apply and leaves no CronJob', async () => {
    fake.dropTimeZone = true;
    await expect(reconcileWith(backend, billing())).rejects.toThrow(/dropped spec\.timeZone/);
    expect(fake.get('cronjobs', NS, 'cronix-billing-settle-0')).toBeUndefined();
  });

  it('an unreachable API server is BackendUnreachableError (exit 3)', async () => {
    const port = await freePort();
    const dead = FakeKube.prototype.writeKubeconfig.call(
      { url: `http://127.0.0.1:${port}`, token: 't' } as FakeKube,
      tmp(),
    );
    const b = createKubernetesBackend({ ...FLAGS, kubeconfig: dead });
    await expect(b.list('billing')).rejects.toThrow(BackendUnreachableError);
    await expect(b.list('billing')).rejects.toThrow(
      /cannot reach the Kubernetes API server http:\/\/127\.0\.0\.1:\d+ .*ECONNREFUSED/,
    );
    const [entry] = desiredEntries(billing());
    await expect(b.apply({ deletes: [], updates: [], creates: [entry!] })).rejects.toThrow(
      BackendUnreachableError,
    );
  });

  it('an API server that never answers times out as unreachable', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const path = FakeKube.prototype.writeKubeconfig.call({ url, token: 't' } as FakeKube, tmp());
    const b = createKubernetesBackend({ ...FLAGS, kubeconfig: path }, { timeoutMs: 300 });
    await expect(b.list()).rejects.toThrow(/no answer within 300 ms/);
    silent.closeAllConnections();
    silent.close();
  });

  it('rejected credentials are a BackendWriteError naming the kubeconfig', async () => {
    const path = FakeKube.prototype.writeKubeconfig.call(
      { url: fake.url, token: 'wrong' } as FakeKube,
      tmp(),
    );
    const b = createKubernetesBackend({ ...FLAGS, kubeconfig: path });
    await expect(b.list()).rejects.toThrow(
      /Kubernetes refused listing CronJobs in jobs: Unauthorized \(check the credentials/,
    );
  });

  it('a missing kubeconfig is a BackendConfigError naming --kubeconfig', () => {
    expect(() => createKubernetesBackend({ kubeconfig: join(tmp(), 'nope.yaml') })).toThrow(
      BackendConfigError,
    );
    expect(() => createKubernetesBackend({ kubeconfig: join(tmp(), 'nope.yaml') })).toThrow(
      /^--kubeconfig: cannot load/,
    );
  });

  it('no kubeconfig anywhere, or a plain-HTTP cluster without skip-TLS, is a BackendConfigError', async () => {
    const saved = { HOME: process.env['HOME'], KUBECONFIG: process.env['KUBECONFIG'] };
    process.env['HOME'] = tmp();
    delete process.env['KUBECONFIG'];
    try {
      expect(() => createKubernetesBackend({})).toThrow(/no kubeconfig found.*pass --kubeconfig/);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    const path = fake.writeKubeconfig(tmp());
    writeFileSync(path, readFileSync(path, 'utf8').replace(/.*insecure-skip-tls-verify.*\n/, ''));
    const b = createKubernetesBackend({ ...FLAGS, kubeconfig: path });
    await expect(b.list()).rejects.toThrow(BackendConfigError);
    await expect(b.list()).rejects.toThrow(/plain HTTP.*insecure-skip-tls-verify: true/);
  });

  it('the namespace defaults to the kubeconfig context, then "default"', () => {
    const withNs = createKubernetesBackend({ kubeconfig: fake.writeKubeconfig(tmp(), 'team-a') });
    expect(withNs.target).toBe(`namespace team-a at ${fake.url}`);
    expect(createKubernetesBackend({ kubeconfig }).target).toBe(`namespace default at ${fake.url}`);
  });
});

function markerOf(app: string, job: string): Record<string, string> {
  return {
    'cronix.dev/managed': 'true',
    'cronix.dev/app': app,
    'cronix.dev/job': job,
    'cronix.dev/index': '0',
    'cronix.dev/hash': '0123456789abcdef',
  };
}

describe('reports (SPEC §15): --report-to and --report-secret-ref', () => {
  const REPORT = {
    url: 'https://watch.example.com/cronix',
    secretRefs: ['env:CRONIX_REPORT_SECRET'],
  };
  type Container = { command: string[]; env: { name: string; valueFrom?: unknown }[] };
  const containerOf = (cj: KubeObject): Container =>
    (
      cj['spec'] as {
        jobTemplate: { spec: { template: { spec: { containers: Container[] } } } };
      }
    ).jobTemplate.spec.template.spec.containers[0]!;

  it('the spec ConfigMap records both, the CronJob runs the shim with --report-to and the secret as env', async () => {
    const reporting = createKubernetesBackend(
      { ...FLAGS, kubeconfig, report: REPORT },
      { now: NOW },
    );
    await reconcileWith(reporting, billing());
    // what went over the wire, through the real client library
    const cm = fake.requests.find((r) => r.method === 'POST' && r.path === CM)?.body as KubeObject;
    const spec = JSON.parse(
      (cm['data'] as Record<string, string>)['billing.settle.json']!,
    ) as Record<string, unknown>;
    expect(spec).toMatchObject({
      report_to: REPORT.url,
      report_secret_refs: REPORT.secretRefs,
    });
    const cj = fake.requests.find((r) => r.method === 'POST' && r.path === CJ)?.body as KubeObject;
    const container = containerOf(cj);
    expect(container.command.slice(-2)).toEqual(['--report-to', REPORT.url]);
    expect(container.env).toContainEqual({
      name: 'CRONIX_REPORT_SECRET',
      valueFrom: {
        secretKeyRef: { name: FLAGS.k8sSecret, key: 'CRONIX_REPORT_SECRET', optional: true },
      },
    });
    // unchanged flags: nothing to do; other report flags: modified and rewritten
    expect((await reporting.list('billing'))[0]?.modified).toBeUndefined();
    expect((await backend.list('billing'))[0]?.modified).toBe('spec ConfigMap data differs');
    const moved = createKubernetesBackend(
      { ...FLAGS, kubeconfig, report: { ...REPORT, url: 'https://other.example.com' } },
      { now: NOW },
    );
    expect((await moved.list('billing'))[0]?.modified).toBe('spec ConfigMap data differs');
    fake.requests.length = 0;
    await reconcileWith(backend, billing()); // without --report-to: both objects lose it
    expect(fake.writes().map((r) => `${r.method} ${r.path}`)).toEqual([
      `PUT ${CM}/cronix-billing-settle-0`,
      `PUT ${CJ}/cronix-billing-settle-0`,
    ]);
    const live = fake.get('cronjobs', NS, 'cronix-billing-settle-0') as KubeObject;
    expect(containerOf(live).command).not.toContain('--report-to');
  });

  it('a file: report secret ref is refused (the pod has no such file)', () => {
    const reporting = createKubernetesBackend(
      { ...FLAGS, kubeconfig, report: { ...REPORT, secretRefs: ['file:/etc/cronix/report'] } },
      { now: NOW },
    );
    const [entry] = desiredEntries(billing());
    expect(reporting.refuse(entry!).join('; ')).toMatch(/file:\/etc\/cronix\/report.*env:NAME/);
  });
});
