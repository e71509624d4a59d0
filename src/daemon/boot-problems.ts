/**
 * Where a boot or reload problem comes from. The secret, notifier and global-scope checks speak
 * of jobs and apps (`job billing/settle: secret ref env:X is not set`, `app billing: notifier
 * chat: …`); a reload refused for one of them must say which manifest file and which field,
 * like a reload refused for an invalid manifest does (`billing.json: jobs/2/auth/secret_refs:
 * …`). Pure but for reading a manifest file again to find a job's index as written (the
 * normalized manifest sorts jobs by name), done only when there is a problem to place.
 */
import { readFileSync } from 'node:fs';
import type { Manifest } from '../contract/manifest/types.js';

/** One problem, with the file and path it comes from when known. */
export interface BootProblem {
  file?: string;
  path?: string;
  message: string;
}

/**
 * What a problem is about, which decides the field it points at: a job's secrets (its
 * `auth/secret_refs`, or `command/env_from_secrets` for a command job), a notifier, or a policy
 * field of the job (`policy/max_concurrent`).
 */
export type ProblemKind = 'secrets' | 'notifiers' | 'services' | `policy/${string}`;

/** The loaded manifests by app, with the file each came from. */
export type ManifestSources = ReadonlyMap<string, { file: string; manifest: Manifest }>;

/** The index of each job name as written in `file` (empty when it cannot be read again). */
function writtenIndexes(file: string): Map<string, number> {
  const out = new Map<string, number>();
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, '')) as {
      jobs?: { name?: unknown }[];
    };
    raw.jobs?.forEach((j, i) => {
      if (typeof j?.name === 'string' && !out.has(j.name)) out.set(j.name, i);
    });
  } catch {
    // changed or gone since it was loaded: the message still names the job
  }
  return out;
}

/**
 * Places each problem message of one kind in its manifest file and field:
 * `job <app>/<job>: …` → `jobs/N/auth/secret_refs` (HTTP job), `jobs/N/command/env_from_secrets`
 * (command job) or `jobs/N/<kind>`; `app <app>: notifier <name>: …` → `notifiers/<name>`.
 * A message naming neither stays as it is.
 */
export function locateProblems(
  messages: readonly string[],
  kind: ProblemKind,
  sources: ManifestSources,
): BootProblem[] {
  const indexes = new Map<string, Map<string, number>>();
  const indexOf = (file: string, job: string): number | undefined => {
    let known = indexes.get(file);
    if (known === undefined) indexes.set(file, (known = writtenIndexes(file)));
    return known.get(job);
  };
  return messages.map((message) => {
    const job = /^job ([a-z][a-z0-9-]*)\/([a-z][a-z0-9-]*): /.exec(message);
    if (job !== null) {
      const source = sources.get(job[1] as string);
      if (source === undefined) return { message };
      const name = job[2] as string;
      const spec = source.manifest.jobs.find((j) => j.name === name);
      const field =
        kind !== 'secrets'
          ? kind
          : spec?.command !== undefined
            ? 'command/env_from_secrets'
            : 'auth/secret_refs';
      const i = indexOf(source.file, name);
      return { file: source.file, path: i === undefined ? 'jobs' : `jobs/${i}/${field}`, message };
    }
    const service = /^service ([a-z][a-z0-9-]*)\/([a-z][a-z0-9-]*): /.exec(message);
    if (service !== null) {
      const source = sources.get(service[1] as string);
      if (source !== undefined)
        return {
          file: source.file,
          path: `services/${service[2] as string}/env_from_secrets`,
          message,
        };
    }
    const notifier = /^app ([a-z][a-z0-9-]*): notifier ([^:\s]+): /.exec(message);
    if (notifier !== null) {
      const source = sources.get(notifier[1] as string);
      if (source !== undefined)
        return { file: source.file, path: `notifiers/${notifier[2] as string}`, message };
    }
    return { message };
  });
}

/** `app/job` of every job with `concurrency_scope: global`. */
export function globalScopeJobs(manifests: readonly Manifest[]): string[] {
  const out: string[] = [];
  for (const m of manifests)
    for (const j of m.jobs)
      if (j.policy.concurrency_scope === 'global') out.push(`${m.app}/${j.name}`);
  return out;
}

/** `a/x`, `a/x and b/y`, `a/x, b/y and 3 more`: job names for one line. */
export function namesInLine(names: readonly string[], max = 5): string {
  if (names.length <= 1) return names.join('');
  if (names.length <= max) return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

/**
 * Why `serve` cannot start global-scope jobs without a lock backend, naming them and the fix.
 */
export function missingLockBackend(manifests: readonly Manifest[]): string {
  const jobs = globalScopeJobs(manifests);
  return (
    `${jobs.length === 1 ? 'job' : 'jobs'} ${namesInLine(jobs)} ${jobs.length === 1 ? 'has' : 'have'} ` +
    'concurrency_scope global, which takes a Redis lock shared by every daemon and host: start ' +
    'cronix serve with --lock-backend redis://host:6379 (or set CRONIX_REDIS_URL), or set ' +
    'policy.concurrency_scope to "host" (the default) when one daemon runs the job'
  );
}
