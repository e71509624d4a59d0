/**
 * Reading our objects back: the ownership marker from labels, the entry from its spec
 * ConfigMap, and whether the installed pair still is what cronix would render (SPEC §6:
 * a hand-edited object, or one rendered with other flags, is reported `modified`). Pure.
 */
import type { V1ConfigMap, V1CronJob, V1ObjectMeta } from '@kubernetes/client-node';
import { jobChangeHash } from '../../contract/manifest/change-hash.js';
import type { Job } from '../../contract/manifest/types.js';
import { entryId, type DesiredEntry, type OwnedEntry } from '../backend.js';
import {
  LABELS,
  renderEntry,
  specFileName,
  type KubernetesRenderOptions,
} from './kubernetes-render.js';

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const HASH = /^[0-9a-f]{16}$/;

/** Whether an object carries `cronix.dev/managed=true` (only such objects are ever touched). */
export function isManaged(meta: V1ObjectMeta | undefined): boolean {
  return meta?.labels?.[LABELS.managed] === 'true';
}

/** The ownership marker of a managed object, or null when it is absent or malformed. */
export function decodeMarker(meta: V1ObjectMeta | undefined): OwnedEntry | null {
  const labels = meta?.labels;
  if (!isManaged(meta) || !labels || meta?.name === undefined) return null;
  const app = labels[LABELS.app] ?? '';
  const job = labels[LABELS.job] ?? '';
  const index = labels[LABELS.index] ?? '';
  const hash = labels[LABELS.hash] ?? '';
  if (!NAME.test(app) || !NAME.test(job) || !/^(0|[1-9]\d?)$/.test(index) || !HASH.test(hash)) {
    return null;
  }
  return { id: meta.name, app, job, scheduleIndex: Number(index), hash };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The desired entry a spec ConfigMap describes (what `apply` wrote), or null when its spec
 * file is missing or unreadable. The hash is recomputed from the spec's job.
 */
export function entryFromConfigMap(cm: V1ConfigMap, marker: OwnedEntry): DesiredEntry | null {
  const text = cm.data?.[specFileName(marker)];
  if (text === undefined) return null;
  try {
    const raw: unknown = JSON.parse(text);
    if (!isObject(raw) || !isObject(raw['job']) || !Array.isArray(raw['secret_refs'])) return null;
    const app = raw['app'];
    const index = raw['schedule_index'];
    const job = raw['job'] as unknown as Job;
    if (typeof app !== 'string' || typeof index !== 'number' || !Array.isArray(job.schedules)) {
      return null;
    }
    const schedule = job.schedules[index];
    if (typeof schedule !== 'string') return null;
    return {
      id: entryId(app, job.name, index),
      app,
      job: job.name,
      scheduleIndex: index,
      hash: jobChangeHash(app, job, index),
      schedule,
      spec: job,
      secretRefs: (raw['secret_refs'] as unknown[]).filter(
        (r): r is string => typeof r === 'string',
      ),
    };
  } catch {
    return null; // malformed JSON, or a job the canonical writer cannot handle
  }
}

/**
 * The first path where `want` is not contained in `have`, or null. Objects compare key by key
 * (extra keys in `have` — server defaults, status — are fine); arrays by length and element.
 */
export function firstDifference(want: unknown, have: unknown, path = ''): string | null {
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return path || '.';
    for (let i = 0; i < want.length; i++) {
      const d = firstDifference(want[i], have[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  if (isObject(want)) {
    if (typeof have !== 'object' || have === null || Array.isArray(have)) return path || '.';
    for (const [k, v] of Object.entries(want)) {
      if (v === undefined) continue;
      const d = firstDifference(v, (have as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
      if (d !== null) return d;
    }
    return null;
  }
  return want === have ? null : path || '.';
}

/** The image and Secret an installed CronJob uses (to fill flags not given on this run). */
function liveFlags(cj: V1CronJob): { image?: string; secret?: string } {
  const container = cj.spec?.jobTemplate?.spec?.template?.spec?.containers?.[0];
  const secret = container?.env?.find((e) => e.valueFrom?.secretKeyRef)?.valueFrom?.secretKeyRef;
  return { image: container?.image, secret: secret?.name };
}

/**
 * Why an installed entry differs from what cronix renders for it now, or undefined when it
 * does not. Flags absent from `options` (image, Secret) are taken from the live object, so a
 * `list` without `--k8s-image` does not call every entry modified.
 */
export function modifiedReason(
  marker: OwnedEntry,
  cronJob: V1CronJob | undefined,
  configMap: V1ConfigMap | undefined,
  options: KubernetesRenderOptions,
): string | undefined {
  if (marker.id !== entryId(marker.app, marker.job, marker.scheduleIndex)) {
    return 'object name does not match its marker';
  }
  if (cronJob === undefined) return 'CronJob missing';
  if (configMap === undefined) return 'spec ConfigMap missing';
  const cmMarker = decodeMarker(configMap.metadata);
  if (cmMarker === null || cmMarker.hash !== marker.hash) return 'spec ConfigMap marker differs';
  const entry = entryFromConfigMap(configMap, marker);
  if (entry === null) return 'spec ConfigMap unreadable';
  if (entry.hash !== marker.hash || entry.id !== marker.id) return 'spec ConfigMap edited';
  let rendered;
  try {
    rendered = renderEntry(entry, { ...liveFlags(cronJob), ...definedOnly(options) });
  } catch (err) {
    return `cannot render: ${(err as Error).message}`;
  }
  const cmDiff = firstDifference(rendered.configMap.data, configMap.data);
  if (cmDiff !== null) return `spec ConfigMap data differs`;
  const meta = firstDifference(rendered.cronJob.metadata?.labels, cronJob.metadata?.labels);
  if (meta !== null) return `CronJob label ${meta} differs`;
  const spec = firstDifference(rendered.cronJob.spec, cronJob.spec, 'spec');
  return spec === null ? undefined : `CronJob ${spec} differs`;
}

function definedOnly(o: KubernetesRenderOptions): KubernetesRenderOptions {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
