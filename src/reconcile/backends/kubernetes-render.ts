/**
 * The Kubernetes objects of one owned entry (SPEC §6): a `batch/v1 CronJob` and a `v1
 * ConfigMap`, both named `cronix-<app>-<job>-<index>` and labelled with the ownership marker,
 * plus the refusals for what a CronJob cannot express and the render-only YAML for GitOps.
 * Pure: no I/O, no clock (the reference instant of the DST check is passed in).
 */
import { BLACKOUT_NEEDS_SERVE, RATE_NEEDS_SERVE } from './crontab.js';
import type { V1ConfigMap, V1CronJob, V1EnvVar } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { canonicalJob, writeNotifiers } from '../../contract/manifest/canonical.js';
import { attemptStopSeconds } from '../../contract/manifest/effective.js';
import type { Job } from '../../contract/manifest/types.js';
import { worstCaseFireSeconds } from '../../contract/run.js';
import { parseSchedule } from '../../contract/schedule/cron.js';
import { reportKeys, type Backend, type DesiredEntry, type ReportTarget } from '../backend.js';
import { CRONJOB_MINUTES, dstConflict, translateSchedule } from './kubernetes-schedule.js';
import { refuseSecondsEntry } from './seconds.js';

/** The ownership marker's labels, on the CronJob, its ConfigMap, Jobs and Pods. */
export const LABELS = {
  managed: 'cronix.dev/managed',
  app: 'cronix.dev/app',
  job: 'cronix.dev/job',
  index: 'cronix.dev/index',
  hash: 'cronix.dev/hash',
} as const;

/** Annotation holding the schedule as written in the manifest (the CronJob's may be rewritten). */
export const SCHEDULE_ANNOTATION = 'cronix.dev/schedule';

/** Where the spec ConfigMap is mounted in the pod (the shim's `--spec-dir`). */
export const POD_SPEC_DIR = '/etc/cronix/jobs';
/** An emptyDir for the shim's host lock and state directories (the pod is the "host"). */
export const POD_RUN_DIR = '/var/run/cronix';
/** The command the container runs: the image must have `cronix` on its PATH. */
export const POD_COMMAND = 'cronix';

/**
 * Longest CronJob name the API server accepts: the controller names each Job
 * `<cronjob>-<minutes since epoch>`, which must fit a 63-character DNS label.
 */
export const MAX_CRONJOB_NAME = 52;
/** Seconds granted for pod scheduling and container start, on top of the worst-case fire. */
export const POD_START_ALLOWANCE_SECONDS = 60;
/** Smallest `startingDeadlineSeconds` cronix sets: a normal controller delay is never "missed". */
export const MIN_STARTING_DEADLINE_SECONDS = 60;
/** Jobs kept per CronJob for `kubectl` inspection. */
export const JOBS_HISTORY_LIMIT = 3;

/** Backend flags the objects depend on. */
export interface KubernetesRenderOptions {
  /** `--k8s-namespace`; omitted from the objects when absent (render-only YAML). */
  namespace?: string;
  /** `--k8s-image`: an image with `cronix` on its PATH. */
  image?: string;
  /** `--k8s-secret`: the Secret whose keys back `env:` secret refs and `CRONIX_REDIS_URL`. */
  secret?: string;
  /**
   * `--report-to` / `--report-secret-ref` (SPEC §15): in the spec ConfigMap and, as
   * `--report-to`, on the container's command line. Taken from the flags (not the entry read
   * back from a ConfigMap), so an entry installed with other report flags is `modified`.
   */
  report?: ReportTarget;
}

/** The command-line flags of the Kubernetes backend (a subset of the core's `BackendOptions`). */
export interface KubernetesFlags {
  /** `--k8s-namespace`. */
  k8sNamespace?: string;
  /** `--k8s-image`. */
  k8sImage?: string;
  /** `--kubeconfig`. */
  kubeconfig?: string;
  /** `--k8s-secret`. */
  k8sSecret?: string;
  /** `--k8s-render [FILE]`: render YAML instead of calling the API (`true` = stdout). */
  k8sRender?: string | boolean;
  /** `--report-to` / `--report-secret-ref`. */
  report?: ReportTarget;
}

/** The Kubernetes backend: the seam plus the render-only YAML of a set of entries. */
export interface KubernetesBackend extends Backend {
  readonly name: 'kubernetes';
  /** Render-only YAML (ConfigMap + CronJob per entry) with this backend's flags. */
  renderYaml(entries: readonly DesiredEntry[]): string;
}

/** Test seams of the Kubernetes backend factories. */
export interface KubernetesBackendDeps {
  /** Clock of the DST refusal check (default `Date.now`). */
  now?: () => number;
  /** Per-request timeout in ms (default 30 000). */
  timeoutMs?: number;
  /** Where `--k8s-render` without a file writes (default `process.stdout`). */
  stdout?: { write(text: string): unknown };
}

/** The render options of the command-line flags, in `namespace` when given. */
export function renderOptionsOf(
  flags: KubernetesFlags,
  namespace?: string,
): KubernetesRenderOptions {
  return {
    ...(namespace !== undefined ? { namespace } : {}),
    ...(flags.k8sImage !== undefined ? { image: flags.k8sImage } : {}),
    ...(flags.k8sSecret !== undefined ? { secret: flags.k8sSecret } : {}),
    ...(flags.report !== undefined ? { report: flags.report } : {}),
  };
}

/** The two objects of one entry. */
export interface RenderedEntry {
  configMap: V1ConfigMap;
  cronJob: V1CronJob;
}

/** A Kubernetes env var name that is also a valid Secret key (portable across versions). */
const ENV_KEY = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const LABEL_VALUE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Env var names the entry's secret refs read (`env:NAME` or a bare name), or a refusal. */
function envRefNames(refs: readonly string[]): { names: string[] } | { reason: string } {
  const names: string[] = [];
  for (const ref of refs) {
    const colon = ref.indexOf(':');
    const prefix = colon > 0 ? ref.slice(0, colon) : '';
    if (prefix === 'raw') continue;
    if (prefix === 'file') {
      return {
        reason:
          `secret ref "${ref}": the pod has no such file: use env:NAME refs, backed by ` +
          `keys of the Kubernetes Secret named by --k8s-secret`,
      };
    }
    const name = prefix === 'env' ? ref.slice(colon + 1) : ref;
    if (!ENV_KEY.test(name)) {
      return {
        reason: `secret ref "${ref}": "${name}" cannot be both an env var and a Secret key in Kubernetes (letters, digits, "-", "_", "." only)`,
      };
    }
    if (!names.includes(name)) names.push(name);
  }
  return { names };
}

/**
 * `startingDeadlineSeconds` from the job's catch-up policy (SPEC §8): absent or `latest`
 * without a window → none (the controller starts the most recent missed fire however late,
 * like the daemon's default); a window W → max(W, 60); `none` → 60. Mode `all` is refused.
 */
export function startingDeadlineSeconds(job: Job): number | undefined {
  const c = job.policy.catchup;
  if (c === undefined) return undefined;
  if (c.mode === 'none') return MIN_STARTING_DEADLINE_SECONDS;
  if (c.window_seconds === undefined) return undefined;
  return Math.max(c.window_seconds, MIN_STARTING_DEADLINE_SECONDS);
}

/**
 * `activeDeadlineSeconds` of each Job: the worst-case fire (a command job's graceful stop
 * included per attempt) + 30 s + pod start allowance.
 */
export function activeDeadlineSeconds(job: Job): number {
  return (
    worstCaseFireSeconds(job.policy, attemptStopSeconds(job)) + 30 + POD_START_ALLOWANCE_SECONDS
  );
}

/**
 * The refs the shim resolves in the pod: a command job's `env_from_secrets` (it signs
 * nothing, SPEC §11), else the entry's signing refs and its `request.headers_from_secrets`;
 * plus the report secret's refs (SPEC §15).
 */
function podRefs(entry: DesiredEntry, report: ReportTarget | undefined): string[] {
  const command = entry.spec.command;
  const fire =
    command === undefined
      ? [...entry.secretRefs, ...Object.values(entry.spec.request?.headers_from_secrets ?? {})]
      : Object.values(command.env_from_secrets ?? {});
  return [...fire, ...(report?.secretRefs ?? [])];
}

/**
 * Every reason a CronJob cannot carry `entry` faithfully (empty when it can). `now` anchors the DST check (the next 12 years of the job's time zone).
 */
export function refuseKubernetes(
  entry: DesiredEntry,
  options: KubernetesRenderOptions,
  now: number,
): string[] {
  const reasons: string[] = [];
  const { policy } = entry.spec;
  if (entry.id.length > MAX_CRONJOB_NAME) {
    reasons.push(
      `the CronJob name ${entry.id} has ${entry.id.length} characters, Kubernetes allows ` +
        `${MAX_CRONJOB_NAME} (it appends "-<minute>" to name each Job): shorten the app or job name`,
    );
  }
  for (const [what, value] of [
    ['app', entry.app],
    ['job', entry.job],
  ] as const) {
    if (!LABEL_VALUE.test(value)) {
      reasons.push(
        `${what} name "${value}" is not a valid label value (it must end with a letter or digit)`,
      );
    }
  }
  if (!options.image) reasons.push('--k8s-image is required: an image with cronix on its PATH');
  if (policy.concurrency === 'Enqueue') {
    reasons.push(
      "concurrency Enqueue needs the daemon's queue (cronix serve), a CronJob can only Allow, Forbid or Replace",
    );
  }
  if (policy.max_concurrent !== undefined && policy.max_concurrent > 1) {
    reasons.push(
      `max_concurrent ${policy.max_concurrent} needs cronix serve: a CronJob runs one Job at a time (Forbid/Replace) or any number (Allow)`,
    );
  }
  if (policy.catchup?.mode === 'all') {
    reasons.push(
      'catchup mode "all" needs cronix serve: the CronJob controller starts only the most recent missed fire',
    );
  }
  if ((policy.jitter?.stable_seconds ?? 0) > 0 || (policy.jitter?.random_seconds ?? 0) > 0) {
    reasons.push('jitter needs cronix serve: a CronJob starts its Job at the scheduled minute');
  }
  if (policy.rate !== undefined) reasons.push(RATE_NEEDS_SERVE);
  if (policy.blackout !== undefined) reasons.push(BLACKOUT_NEEDS_SERVE);
  const refs = envRefNames(podRefs(entry, options.report));
  if ('reason' in refs) reasons.push(refs.reason);
  else if (refs.names.length > 0 && !options.secret) {
    reasons.push(
      `secret refs ${refs.names.map((n) => `env:${n}`).join(', ')} need --k8s-secret: the Kubernetes Secret holding those keys`,
    );
  }
  if (policy.concurrency_scope === 'global' && !options.secret) {
    reasons.push(
      'concurrency_scope global needs Redis: put its URL under the key CRONIX_REDIS_URL of a Secret and pass --k8s-secret',
    );
  }
  const seconds = refuseSecondsEntry(entry, CRONJOB_MINUTES);
  const t = translateSchedule(entry.schedule, entry.spec.timezone);
  if (seconds !== null) reasons.unshift(seconds);
  else if (!t.ok) reasons.push(t.reason);
  else {
    const parsed = parseSchedule(entry.schedule);
    const dst = parsed.ok ? dstConflict(parsed.schedule, t.timeZone, now) : null;
    if (dst) reasons.push(dst);
  }
  return reasons;
}

/**
 * The spec file the shim reads (SPEC §5.1): `{"app","schedule_index","secret_refs","job"}`,
 * plus `"notifiers"` for a job with notifications (SPEC §12) and `"report_to"`,
 * `"report_secret_refs"` with `--report-to` (SPEC §15).
 */
export function specFileJson(entry: DesiredEntry, report?: ReportTarget): string {
  const notifiers =
    entry.notifiers === undefined ? '' : `,"notifiers":${writeNotifiers(entry.notifiers)}`;
  return (
    `{"app":${JSON.stringify(entry.app)},"schedule_index":${entry.scheduleIndex},` +
    `"secret_refs":${JSON.stringify(entry.secretRefs)},"job":${canonicalJob(entry.spec)}${notifiers}${reportKeys(report)}}\n`
  );
}

/** The ConfigMap key of the spec file, `<app>.<job>.json`. */
export const specFileName = (entry: { app: string; job: string }): string =>
  `${entry.app}.${entry.job}.json`;

/** The marker labels of an entry. */
export function markerLabels(entry: DesiredEntry): Record<string, string> {
  return {
    [LABELS.managed]: 'true',
    [LABELS.app]: entry.app,
    [LABELS.job]: entry.job,
    [LABELS.index]: String(entry.scheduleIndex),
    [LABELS.hash]: entry.hash,
  };
}

function podEnv(
  entry: DesiredEntry,
  secret: string | undefined,
  report: ReportTarget | undefined,
): V1EnvVar[] {
  const env: V1EnvVar[] = [
    { name: 'CRONIX_HOST_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    // the Job's name ends in its scheduled minute: the shim's fire time for a late pod
    {
      name: 'CRONIX_K8S_JOB_NAME',
      valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-name']" } },
    },
  ];
  const fromSecret = (name: string): V1EnvVar => ({
    name,
    valueFrom: { secretKeyRef: { name: secret as string, key: name, optional: true } },
  });
  if (secret !== undefined && entry.spec.policy.concurrency_scope === 'global') {
    env.push(fromSecret('CRONIX_REDIS_URL'), fromSecret('CRONIX_REDIS_PREFIX'));
  }
  const refs = envRefNames(podRefs(entry, report));
  if (secret !== undefined && 'names' in refs) {
    for (const name of refs.names)
      if (!env.some((e) => e.name === name)) env.push(fromSecret(name));
  }
  return env;
}

/**
 * The ConfigMap and CronJob of `entry`. Keys are in a fixed order, so the YAML is stable.
 * @throws RangeError when the schedule cannot be translated (call {@link refuseKubernetes} first).
 */
export function renderEntry(entry: DesiredEntry, options: KubernetesRenderOptions): RenderedEntry {
  const t = translateSchedule(entry.schedule, entry.spec.timezone);
  if (!t.ok) throw new RangeError(`${entry.id}: ${t.reason}`);
  const labels = markerLabels(entry);
  const metadata = (): V1CronJob['metadata'] => ({
    name: entry.id,
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    labels: { ...labels },
  });
  const configMap: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(),
    data: { [specFileName(entry)]: specFileJson(entry, options.report) },
  };
  const { policy } = entry.spec;
  const deadline = startingDeadlineSeconds(entry.spec);
  const cronJob: V1CronJob = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { ...metadata(), annotations: { [SCHEDULE_ANNOTATION]: entry.schedule } },
    spec: {
      schedule: t.schedule,
      timeZone: t.timeZone,
      concurrencyPolicy: policy.concurrency === 'Enqueue' ? 'Forbid' : policy.concurrency,
      ...(deadline !== undefined ? { startingDeadlineSeconds: deadline } : {}),
      suspend: false,
      successfulJobsHistoryLimit: JOBS_HISTORY_LIMIT,
      failedJobsHistoryLimit: JOBS_HISTORY_LIMIT,
      jobTemplate: {
        metadata: { labels: { ...labels } },
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: activeDeadlineSeconds(entry.spec),
          template: {
            metadata: { labels: { ...labels } },
            spec: {
              restartPolicy: 'Never',
              automountServiceAccountToken: false,
              containers: [
                {
                  name: 'trigger',
                  image: options.image ?? '',
                  command: [
                    POD_COMMAND,
                    'trigger',
                    `${entry.app}.${entry.job}`,
                    '--spec-dir',
                    POD_SPEC_DIR,
                    '--lock-dir',
                    `${POD_RUN_DIR}/lock`,
                    '--state-dir',
                    `${POD_RUN_DIR}/state`,
                    ...(options.report ? ['--report-to', options.report.url] : []),
                  ],
                  env: podEnv(entry, options.secret, options.report),
                  resources: { requests: { cpu: '50m', memory: '64Mi' } },
                  volumeMounts: [
                    { name: 'spec', mountPath: POD_SPEC_DIR, readOnly: true },
                    { name: 'run', mountPath: POD_RUN_DIR },
                  ],
                },
              ],
              volumes: [
                { name: 'spec', configMap: { name: entry.id, defaultMode: 0o444 } },
                { name: 'run', emptyDir: {} },
              ],
            },
          },
        },
      },
    },
  };
  return { configMap, cronJob };
}

/** First line of every rendered YAML stream. */
export const RENDER_HEADER =
  '# Rendered by cronix (kubernetes backend). Apply with kubectl or a GitOps tool.\n';

/**
 * Render-only YAML for GitOps: one ConfigMap and one CronJob per entry (sorted by id), as
 * multi-document YAML with a stable key order. Parse it back with `yaml`'s `parseAllDocuments`.
 */
export function renderYaml(
  entries: readonly DesiredEntry[],
  options: KubernetesRenderOptions,
): string {
  const docs = [...entries]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .flatMap((e) => {
      const r = renderEntry(e, options);
      return [r.configMap, r.cronJob];
    });
  return RENDER_HEADER + docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join('');
}
