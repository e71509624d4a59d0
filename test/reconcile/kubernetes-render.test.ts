/**
 * The rendered objects of the Kubernetes backend: valid against the Kubernetes OpenAPI schema
 * (kubernetes-models), carrying what SPEC §6 asks for, a spec ConfigMap the real shim loads,
 * render-only YAML that parses back to the same objects, and the refusal table.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { jobChangeHash, parseManifest } from '../../src/contract/manifest/index.js';
import { worstCaseFireSeconds } from '../../src/contract/run.js';
import type { DesiredEntry } from '../../src/reconcile/backend.js';
import {
  LABELS,
  refuseKubernetes,
  renderEntry,
  renderYaml,
  specFileName,
} from '../../src/reconcile/backends/kubernetes-render.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { contractManifest } from './contract.js';
import { loadSpec } from '../../src/shim/spec.js';

type JobInput = Record<string, unknown> & { name: string };

/** Desired entries of a manifest of `app` with `jobs` (schedule default every 10 minutes). */
function entriesOf(app: string, jobs: JobInput[], secretRefs?: string[]): DesiredEntry[] {
  const r = parseManifest({
    version: 1,
    app,
    jobs: jobs.map((j) => ({
      ...('schedules' in j ? {} : { schedule: '*/10 * * * *' }),
      request: { url: `https://${app}.example.internal/cron/${j.name}` },
      auth: { secret_refs: ['env:CRON_SECRET'] },
      ...j,
    })),
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return desiredEntries(r.manifest, secretRefs ? { secretRefs } : {});
}

const one = (job: Partial<JobInput> = {}, app = 'billing'): DesiredEntry => {
  const [e] = entriesOf(app, [{ name: 'settle', ...job }]);
  if (!e) throw new Error('no entry');
  return e;
};

const FLAGS = { namespace: 'jobs', image: 'ghcr.io/acme/cronix:1.2.3', secret: 'cron-secrets' };
const NOW = Date.UTC(2026, 0, 1);

describe('rendered objects', () => {
  const variants: [string, DesiredEntry][] = [
    ['defaults (Forbid, host scope)', one()],
    ['Allow', one({ policy: { concurrency: 'Allow' } })],
    [
      'Replace, global scope',
      one({ policy: { concurrency: 'Replace', concurrency_scope: 'global' } }),
    ],
    ['catch-up none', one({ policy: { catchup: { mode: 'none' } } })],
    ['catch-up window 1 h', one({ policy: { catchup: { mode: 'latest', window_seconds: 3600 } } })],
    [
      'non-UTC zone, several refs',
      one({
        schedule: '0 9 * * MON-FRI',
        timezone: 'Europe/Berlin',
        auth: { secret_refs: ['env:NEW_SECRET', 'OLD_SECRET', 'raw:literal'] },
      }),
    ],
    ['@every 15m in Asia/Kolkata', one({ schedule: '@every 15m', timezone: 'Asia/Kolkata' })],
  ];

  it.each(variants)(
    '%s: valid CronJob and ConfigMap per the Kubernetes OpenAPI schema',
    (_, entry) => {
      expect(refuseKubernetes(entry, FLAGS, NOW)).toEqual([]);
      const { cronJob, configMap } = renderEntry(entry, FLAGS);
      expect(() =>
        new CronJob(cronJob as ConstructorParameters<typeof CronJob>[0]).validate(),
      ).not.toThrow();
      expect(() =>
        new ConfigMap(configMap as ConstructorParameters<typeof ConfigMap>[0]).validate(),
      ).not.toThrow();
      const labels = {
        [LABELS.managed]: 'true',
        [LABELS.app]: 'billing',
        [LABELS.job]: 'settle',
        [LABELS.index]: '0',
        [LABELS.hash]: entry.hash,
      };
      expect(cronJob.metadata).toMatchObject({
        name: 'cronix-billing-settle-0',
        namespace: 'jobs',
        labels,
      });
      expect(configMap.metadata).toEqual({
        name: 'cronix-billing-settle-0',
        namespace: 'jobs',
        labels,
      });
      expect(cronJob.spec?.jobTemplate.metadata?.labels).toEqual(labels);
      expect(cronJob.spec?.jobTemplate.spec?.template.metadata?.labels).toEqual(labels);
    },
  );

  it('carries the SPEC §6 settings: schedule, zone, policy, limits, deadlines, container', () => {
    const entry = one({
      schedule: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      policy: {
        concurrency: 'Replace',
        timeout_seconds: 120,
        retries: { max_attempts: 4, min_seconds: 5, max_seconds: 30 },
      },
    });
    const spec = renderEntry(entry, FLAGS).cronJob.spec;
    const job = spec?.jobTemplate.spec;
    const pod = job?.template.spec;
    expect(spec).toMatchObject({
      schedule: '0 9 * * 1-5',
      timeZone: 'Europe/Berlin',
      concurrencyPolicy: 'Replace',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
    });
    expect(spec?.startingDeadlineSeconds).toBeUndefined();
    // 4 × 120 s + backoffs 5 + 10 + 20 = 515 s; + 30 s + 60 s pod start
    expect(worstCaseFireSeconds(entry.spec.policy)).toBe(515);
    expect(job).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 515 + 30 + 60 });
    expect(pod).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false });
    expect(pod?.containers[0]).toMatchObject({
      image: FLAGS.image,
      command: [
        'cronix',
        'trigger',
        'billing.settle',
        '--spec-dir',
        '/etc/cronix/jobs',
        '--lock-dir',
        '/var/run/cronix/lock',
        '--state-dir',
        '/var/run/cronix/state',
      ],
      volumeMounts: [
        { name: 'spec', mountPath: '/etc/cronix/jobs', readOnly: true },
        { name: 'run', mountPath: '/var/run/cronix' },
      ],
    });
    expect(pod?.volumes).toEqual([
      { name: 'spec', configMap: { name: 'cronix-billing-settle-0', defaultMode: 0o444 } },
      { name: 'run', emptyDir: {} },
    ]);
  });

  it('maps catch-up onto startingDeadlineSeconds (none → 60, window → max(window, 60))', () => {
    const deadline = (catchup: unknown): number | undefined =>
      renderEntry(one({ policy: { catchup } }), FLAGS).cronJob.spec?.startingDeadlineSeconds;
    expect(deadline({ mode: 'none' })).toBe(60);
    expect(deadline({ mode: 'latest', window_seconds: 30 })).toBe(60);
    expect(deadline({ mode: 'latest', window_seconds: 900 })).toBe(900);
    expect(deadline({ mode: 'latest' })).toBeUndefined();
  });

  it('wires secrets: host id from the pod name, env refs and the Redis URL from the Secret', () => {
    const env = (entry: DesiredEntry): unknown =>
      renderEntry(entry, FLAGS).cronJob.spec?.jobTemplate.spec?.template.spec?.containers[0]?.env;
    const key = (name: string): unknown => ({
      name,
      valueFrom: { secretKeyRef: { name: 'cron-secrets', key: name, optional: true } },
    });
    const hostId = {
      name: 'CRONIX_HOST_ID',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    };
    // the Job's name (its scheduled minute) for the shim's fire time of a late pod
    const jobName = {
      name: 'CRONIX_K8S_JOB_NAME',
      valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-name']" } },
    };
    expect(env(one({ auth: { secret_refs: ['env:NEW', 'OLD', 'raw:x', 'env:NEW'] } }))).toEqual([
      hostId,
      jobName,
      key('NEW'),
      key('OLD'),
    ]);
    expect(env(one({ policy: { concurrency_scope: 'global' } }))).toEqual([
      hostId,
      jobName,
      key('CRONIX_REDIS_URL'),
      key('CRONIX_REDIS_PREFIX'),
      key('CRON_SECRET'),
    ]);
  });

  it('a command job: env_from_secrets env refs come from the Secret, file refs are refused, the deadline covers the graceful stop', () => {
    const [cmd] = desiredEntries(
      contractManifest('ops', [
        {
          name: 'backup',
          command: {
            argv: ['/usr/local/bin/backup'],
            env_from_secrets: { DB_PASSWORD: 'env:DB_PW', TOKEN: 'raw:t' },
            graceful_stop_seconds: 15,
          },
          policy: { timeout_seconds: 100, retries: { max_attempts: 1 } },
        },
      ]),
    );
    expect(refuseKubernetes(cmd!, FLAGS, NOW)).toEqual([]);
    const job = renderEntry(cmd!, FLAGS).cronJob.spec?.jobTemplate.spec;
    expect(job?.template.spec?.containers[0]?.env).toEqual([
      { name: 'CRONIX_HOST_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      {
        name: 'CRONIX_K8S_JOB_NAME',
        valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-name']" } },
      },
      {
        name: 'DB_PW',
        valueFrom: { secretKeyRef: { name: 'cron-secrets', key: 'DB_PW', optional: true } },
      },
    ]);
    expect(job?.activeDeadlineSeconds).toBe(100 + 15 + 30 + 60);
    const [fileRef] = desiredEntries(
      contractManifest('ops', [
        { name: 'backup', command: { argv: ['/x'], env_from_secrets: { P: 'file:/run/pw' } } },
      ]),
    );
    expect(refuseKubernetes(fileRef!, FLAGS, NOW).join('; ')).toMatch(
      /secret ref "file:\/run\/pw": the pod has no such file/,
    );
  });

  it('the ConfigMap holds <app>.<job>.json, which the real shim loads with the same change hash', async () => {
    const entry = entriesOf(
      'billing',
      [{ name: 'sync', schedules: ['*/15 * * * *', '0 6 * * 1-5'] }],
      ['env:FLAG_SECRET'],
    )[1] as DesiredEntry;
    const { configMap } = renderEntry(entry, FLAGS);
    expect(Object.keys(configMap.data ?? {})).toEqual([specFileName(entry)]);
    const dir = mkdtempSync(join(tmpdir(), 'cronix-k8s-spec-'));
    writeFileSync(join(dir, 'billing.sync.json'), configMap.data?.['billing.sync.json'] ?? '');
    const spec = await loadSpec(dir, 'billing.sync');
    expect(spec).toMatchObject({
      app: 'billing',
      scheduleIndex: 1,
      secretRefs: ['env:FLAG_SECRET'],
    });
    expect(spec.job).toEqual(entry.spec);
    expect(jobChangeHash(spec.app, spec.job, spec.scheduleIndex)).toBe(entry.hash);
  });
});

describe('render-only YAML', () => {
  const entries = [
    ...entriesOf('billing', [
      { name: 'settle' },
      { name: 'report', schedules: ['0 3 * * *', '@weekly'] },
    ]),
  ];

  it('parses back (yaml) to exactly the rendered objects, ConfigMap before CronJob, sorted by name', () => {
    const text = renderYaml(entries, FLAGS);
    const docs = parseAllDocuments(text).map((d) => d.toJSON() as unknown);
    const expected = [...entries]
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .flatMap((e) => {
        const r = renderEntry(e, FLAGS);
        return [r.configMap, r.cronJob];
      });
    expect(docs).toEqual(expected);
    expect(docs.map((d) => (d as { kind: string }).kind)).toEqual([
      'ConfigMap',
      'CronJob',
      'ConfigMap',
      'CronJob',
      'ConfigMap',
      'CronJob',
    ]);
  });

  it('with --report-to: the spec the shim loads names the server and secret, the command says --report-to', async () => {
    const report = { url: 'https://watch.example.com', secretRefs: ['env:REPORT_SECRET'] };
    const text = renderYaml(entries.slice(0, 1), { ...FLAGS, report });
    const [cm, cj] = parseAllDocuments(text).map((d) => d.toJSON() as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
    const name = Object.keys(cm!['data'])[0]!;
    const dir = mkdtempSync(join(tmpdir(), 'cronix-k8s-report-'));
    writeFileSync(join(dir, name), cm!['data'][name]);
    const spec = await loadSpec(dir, name.replace(/\.json$/, ''));
    expect(spec).toMatchObject({
      reportTo: report.url,
      reportSecretRefs: report.secretRefs,
      reportProblem: null,
    });
    const container = cj!['spec'].jobTemplate.spec.template.spec.containers[0];
    expect(container.command.slice(-2)).toEqual(['--report-to', report.url]);
    expect(container.env.map((e: { name: string }) => e.name)).toContain('REPORT_SECRET');
    expect(new CronJob(cj).validate()).toBeUndefined();
  });

  it('is stable: same text for the same entries in any order, keys in a fixed order', () => {
    const text = renderYaml(entries, FLAGS);
    expect(renderYaml([...entries].reverse(), FLAGS)).toBe(text);
    expect(text).toMatch(/^# Rendered by cronix/);
    expect(
      text
        .split('---\n')
        .slice(1)
        .every((doc) => /^apiVersion: .*\nkind: .*\nmetadata:\n {2}name: /.test(doc)),
    ).toBe(true);
    expect(text).toContain('cronix.dev/index: "0"'); // label values stay strings
  });

  it('omits the namespace when --k8s-namespace is not given (kubectl apply -n decides)', () => {
    const text = renderYaml(entries.slice(0, 1), { image: 'img', secret: 's' });
    expect(text).not.toContain('namespace:');
  });
});

describe('refusals', () => {
  const long = 'a'.repeat(30);
  it.each<[string, DesiredEntry, Partial<typeof FLAGS>, RegExp]>([
    [
      'Enqueue',
      one({ policy: { concurrency: 'Enqueue' } }),
      {},
      /Enqueue needs the daemon's queue/,
    ],
    [
      'max_concurrent 2',
      one({ policy: { concurrency: 'Forbid', max_concurrent: 2 } }),
      {},
      /max_concurrent 2 needs cronix serve/,
    ],
    [
      'catch-up all',
      one({ policy: { catchup: { mode: 'all' } } }),
      {},
      /only the most recent missed fire/,
    ],
    [
      'jitter',
      one({ policy: { jitter: { random_seconds: 30 } } }),
      {},
      /jitter needs cronix serve/,
    ],
    [
      'a rate limit',
      one({ policy: { rate: { key: 'api', per_second: 5 } } }),
      {},
      /policy.rate needs cronix serve: the trigger shim keeps no rate budget/,
    ],
    [
      'a 53-character name',
      one({ name: 'settle-invoic' }, long),
      {},
      /has 53 characters, Kubernetes allows 52/,
    ],
    [
      'a job name ending in "-"',
      one({ name: 'settle-' }),
      {},
      /job name "settle-" is not a valid label value/,
    ],
    [
      'a file: secret ref',
      one({ auth: { secret_refs: ['file:/run/secrets/cron'] } }),
      {},
      /the pod has no such file/,
    ],
    [
      'an env ref that is no Secret key',
      one({ auth: { secret_refs: ['env:A:B'] } }),
      {},
      /cannot be both an env var and a Secret key/,
    ],
    [
      'env refs without --k8s-secret',
      one(),
      { secret: undefined },
      /env:CRON_SECRET need --k8s-secret/,
    ],
    [
      'global scope without --k8s-secret',
      one({ policy: { concurrency_scope: 'global' }, auth: { secret_refs: ['raw:x'] } }),
      { secret: undefined },
      /global needs Redis.*CRONIX_REDIS_URL/,
    ],
    ['no --k8s-image', one(), { image: undefined }, /--k8s-image is required/],
    [
      'AND of two restricted day fields',
      one({ schedule: '0 0 */2 * MON' }),
      {},
      /only a bare "\*" as a wildcard/,
    ],
    ['@every 90m', one({ schedule: '@every 90m' }), {}, /@every as a delay/],
    [
      '02:30 in New York',
      one({ schedule: '30 2 * * *', timezone: 'America/New_York' }),
      {},
      /skips on 2026-03-08/,
    ],
    [
      '01:30 in New York',
      one({ schedule: '30 1 * * *', timezone: 'America/New_York' }),
      {},
      /repeats on 2026-11-01/,
    ],
  ])('refuses %s', (_, entry, flags, reason) => {
    expect(refuseKubernetes(entry, { ...FLAGS, ...flags }, NOW).join('; ')).toMatch(reason);
  });

  it('lists every reason at once', () => {
    const entry = one({ schedule: '@every 90m', policy: { concurrency: 'Enqueue' } });
    expect(refuseKubernetes(entry, { ...FLAGS, image: undefined }, NOW)).toHaveLength(3);
  });

  it('accepts a 52-character name and what a CronJob can express', () => {
    const entry = one({ name: 'b'.repeat(52 - 'cronix-'.length - long.length - 3) }, long);
    expect(entry.id).toHaveLength(52);
    expect(refuseKubernetes(entry, FLAGS, NOW)).toEqual([]);
    expect(
      refuseKubernetes(
        one({ policy: { concurrency: 'Allow', max_concurrent: undefined } }),
        FLAGS,
        NOW,
      ),
    ).toEqual([]);
    expect(
      refuseKubernetes(
        one({ auth: { secret_refs: ['raw:literal'] } }),
        { ...FLAGS, secret: undefined },
        NOW,
      ),
    ).toEqual([]);
  });
});
