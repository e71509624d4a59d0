/**
 * The Kubernetes backend (SPEC §6): one `CronJob` + spec `ConfigMap` per (job, schedule index),
 * applied directly through the API server with the official client, or rendered as YAML for
 * GitOps (`--k8s-render`, see `kubernetes-file.ts`). Objects without the label
 * `cronix.dev/managed=true` are never read as ours, changed or deleted. Operator documentation:
 * `docs/backends/kubernetes.md`.
 */
import { KubeConfig, type V1ConfigMap, type V1CronJob } from '@kubernetes/client-node';
import {
  BackendConfigError,
  BackendWriteError,
  type AdoptReport,
  type ChangeSet,
  type OwnedEntry,
} from '../backend.js';
import { KubeObjects, type ManagedKind, type ManagedObject } from './kubernetes-api.js';
import { createRenderBackend } from './kubernetes-file.js';
import { decodeMarker, firstDifference, isManaged, modifiedReason } from './kubernetes-marker.js';
import {
  LABELS,
  refuseKubernetes,
  renderEntry,
  renderOptionsOf,
  renderYaml,
  type KubernetesBackend,
  type KubernetesBackendDeps,
  type KubernetesFlags,
  type KubernetesRenderOptions,
} from './kubernetes-render.js';

export type { KubernetesBackend, KubernetesBackendDeps, KubernetesFlags };

function loadKubeConfig(options: KubernetesFlags): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (options.kubeconfig !== undefined) kc.loadFromFile(options.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    const source = options.kubeconfig ?? 'the default kubeconfig ($KUBECONFIG or ~/.kube/config)';
    throw new BackendConfigError(`--kubeconfig: cannot load ${source}: ${(err as Error).message}`);
  }
  const cluster = kc.getCurrentCluster();
  if (
    options.kubeconfig === undefined &&
    cluster?.name === 'cluster' &&
    cluster.server === 'http://localhost:8080'
  ) {
    // loadFromDefault's last resort when there is no kubeconfig and no in-cluster account
    throw new BackendConfigError(
      '--kubeconfig: no kubeconfig found ($KUBECONFIG, ~/.kube/config or an in-cluster service account); pass --kubeconfig FILE',
    );
  }
  if (cluster === null) {
    throw new BackendConfigError(
      '--kubeconfig: the kubeconfig has no current context with a cluster (set one with kubectl config use-context)',
    );
  }
  return kc;
}

/**
 * Creates the backend for `--backend kubernetes`: render-only when `--k8s-render` is given,
 * else direct apply in `--k8s-namespace` (default: the kubeconfig context's namespace, else
 * `default`) through the cluster of `--kubeconfig` (default: the client's discovery).
 * `options` is the core's `BackendOptions` (only the Kubernetes flags are read).
 * @throws {BackendConfigError} naming `--kubeconfig` when no usable kubeconfig is found.
 */
export function createKubernetesBackend(
  options: KubernetesFlags,
  deps: KubernetesBackendDeps = {},
): KubernetesBackend {
  if (options.k8sRender !== undefined && options.k8sRender !== false) {
    const file = typeof options.k8sRender === 'string' ? options.k8sRender : undefined;
    return createRenderBackend(renderOptionsOf(options, options.k8sNamespace), file, deps);
  }
  const kc = loadKubeConfig(options);
  const namespace =
    options.k8sNamespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const api = new KubeObjects(kc, namespace, deps.timeoutMs ?? 30_000);
  const flags = renderOptionsOf(options, namespace);
  const now = deps.now ?? Date.now;
  return {
    name: 'kubernetes',
    target: `namespace ${namespace} at ${api.server}`,
    localSpecFiles: false,
    refuse: (entry) => refuseKubernetes(entry, flags, now()),
    renderYaml: (entries) => renderYaml(entries, flags),
    list: (app) => listOwned(api, flags, app),
    apply: (changes) => applyChanges(api, flags, changes),
    // the public cronix reconciler labels its objects exactly as we do and names them like our
    // entry ids, so they list as ours: adopting replaces each in place (one PUT per object,
    // never a moment without it)
    adopt: async (desired, app, dryRun) => {
      const owned = await listOwned(api, flags, app);
      const want = new Map(desired.map((d) => [d.id, d]));
      const report: AdoptReport = { adopted: [], removed: [] };
      const changes: ChangeSet = { deletes: [], updates: [], creates: [] };
      for (const o of owned) {
        const d = want.get(o.id);
        if (d === undefined) {
          changes.deletes.push(o);
          report.removed.push(o.id);
        } else if (o.hash !== d.hash || o.modified !== undefined) {
          changes.updates.push(d);
          report.adopted.push(d.id);
        }
      }
      if (!dryRun) await applyChanges(api, flags, changes);
      return report;
    },
  };
}

async function listOwned(
  api: KubeObjects,
  flags: KubernetesRenderOptions,
  app?: string,
): Promise<OwnedEntry[]> {
  const selector = `${LABELS.managed}=true${app !== undefined ? `,${LABELS.app}=${app}` : ''}`;
  const cronJobs = (await api.list('CronJob', selector)) as V1CronJob[];
  const configMaps = new Map(
    ((await api.list('ConfigMap', selector)) as V1ConfigMap[]).map((cm) => [cm.metadata?.name, cm]),
  );
  const out: OwnedEntry[] = [];
  const seen = new Set<string>();
  for (const cj of cronJobs) {
    const marker = decodeMarker(cj.metadata);
    if (marker === null || (app !== undefined && marker.app !== app)) continue;
    seen.add(marker.id);
    const modified = modifiedReason(marker, cj, configMaps.get(marker.id), flags);
    out.push(modified === undefined ? marker : { ...marker, modified });
  }
  // a spec ConfigMap without its CronJob is a half-applied entry: report it so the plan
  // either completes it (update) or removes it (delete)
  for (const [name, cm] of configMaps) {
    const marker = decodeMarker(cm.metadata);
    if (marker === null || seen.has(name ?? '') || (app !== undefined && marker.app !== app))
      continue;
    out.push({ ...marker, modified: 'CronJob missing' });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

async function applyChanges(
  api: KubeObjects,
  flags: KubernetesRenderOptions,
  changes: ChangeSet,
): Promise<void> {
  for (const entry of changes.deletes) {
    // the CronJob first, so no new Job starts without its spec
    for (const kind of ['CronJob', 'ConfigMap'] as const) {
      const live = await api.get(kind, entry.id);
      if (live !== null && isManaged(live.metadata)) await api.delete(kind, entry.id);
    }
  }
  for (const entry of [...changes.updates, ...changes.creates]) {
    let rendered;
    try {
      rendered = renderEntry(entry, flags);
    } catch (err) {
      throw new BackendWriteError((err as Error).message);
    }
    // check both names before writing either, so a foreign object leaves nothing half-written
    const liveMap = await api.get('ConfigMap', entry.id);
    const liveJob = await api.get('CronJob', entry.id);
    for (const [kind, live] of [
      ['ConfigMap', liveMap],
      ['CronJob', liveJob],
    ] as const) {
      if (live !== null && !isManaged(live.metadata)) {
        throw new BackendWriteError(
          `${kind} ${api.namespace}/${entry.id} exists but is not managed by cronix (no label ` +
            `${LABELS.managed}=true); cronix will not overwrite it: rename or delete it`,
        );
      }
    }
    // the ConfigMap first, so the CronJob's first pod finds its spec
    await write(api, 'ConfigMap', rendered.configMap, liveMap);
    const stored = await write(api, 'CronJob', rendered.cronJob, liveJob);
    const sent = rendered.cronJob.spec?.timeZone;
    if (stored !== null && (stored as V1CronJob).spec?.timeZone !== sent) {
      await api.delete('CronJob', entry.id);
      throw new BackendWriteError(
        `the API server dropped spec.timeZone of CronJob ${api.namespace}/${entry.id} ` +
          `(Kubernetes older than 1.27, or the CronJobTimeZone feature gate off), so it would fire ` +
          `in the controller's local time zone instead of ${sent}; the CronJob was removed again`,
      );
    }
  }
}

/**
 * Creates `body`, or replaces the managed `live` object unless it already holds everything
 * `body` says (then nothing is written). Returns the stored object, or null when unwritten.
 */
async function write(
  api: KubeObjects,
  kind: ManagedKind,
  body: ManagedObject,
  live: ManagedObject | null,
): Promise<ManagedObject | null> {
  const name = body.metadata?.name ?? '';
  if (live === null) {
    const created = await api.create(kind, body);
    if (created !== 409) return created;
    live = await api.get(kind, name); // created concurrently: treat as an update
    if (live === null || !isManaged(live.metadata)) {
      throw new BackendWriteError(
        `${kind} ${api.namespace}/${name} was created by someone else during apply; run apply again`,
      );
    }
  }
  if (firstDifference(body, live) === null) return null;
  const metadata = { ...body.metadata, resourceVersion: live.metadata?.resourceVersion };
  return api.replace(kind, { ...body, metadata });
}
