/**
 * Resolves the secrets of every job before the daemon schedules anything
 * (SPEC §9 item 2): an HTTP job whose `auth.secret_refs` is empty, or any of
 * whose refs does not resolve, or resolves to fewer than 16 bytes (the
 * shim's rule, `shortSecretsError`), is a configuration error named by job and
 * ref — never a run that fails later with `internal_error`. A command job signs
 * nothing and needs no refs (SPEC §11), but every ref of its
 * `command.env_from_secrets` must resolve, the same way; so must every ref of an
 * HTTP job's `request.headers_from_secrets`. Messages name refs (with `raw:`
 * values hidden), never secret values.
 */
import type { Manifest } from '../contract/manifest/types.js';
import { resolveEnvSecrets, resolveHeaderSecrets } from '../secrets/env-secrets.js';
import { refForDisplay, resolveSecretRefs, shortSecretsError } from '../secrets/resolve.js';
import { jobKey } from './registry.js';

/**
 * Signing secrets and `headers_from_secrets` of HTTP jobs and `env_from_secrets` of command
 * jobs, per `app/job`; or every problem found.
 */
export type JobSecrets =
  | {
      ok: true;
      secrets: Map<string, string[]>;
      envSecrets: Map<string, Record<string, string>>;
      /** Header name → value, for HTTP jobs with `request.headers_from_secrets` only. */
      headerSecrets: Map<string, Record<string, string>>;
    }
  | { ok: false; errors: string[] };

/** Resolves every job's secret refs against `env` (and the disk for `file:` refs). */
export function resolveJobSecrets(
  manifests: readonly Manifest[],
  env: Readonly<Record<string, string | undefined>>,
): JobSecrets {
  const secrets = new Map<string, string[]>();
  const envSecrets = new Map<string, Record<string, string>>();
  const headerSecrets = new Map<string, Record<string, string>>();
  const errors: string[] = [];
  const seen = new Map<string, { problems: string[]; values: string[] | null }>();
  for (const m of manifests) {
    for (const job of m.jobs) {
      const name = (): string => `job ${m.app}/${job.name}`;
      if (job.command !== undefined) {
        const resolved = resolveEnvSecrets(job.command.env_from_secrets, { env });
        if (resolved.ok) envSecrets.set(jobKey(m.app, job.name), resolved.values);
        else errors.push(...resolved.problems.map((p) => `${name()}: ${p}`));
        continue;
      }
      if (job.request?.headers_from_secrets !== undefined) {
        const resolved = resolveHeaderSecrets(job.request.headers_from_secrets, { env });
        if (resolved.ok) headerSecrets.set(jobKey(m.app, job.name), resolved.values);
        else errors.push(...resolved.problems.map((p) => `${name()}: ${p}`));
      }
      const refs = job.auth.secret_refs;
      if (refs.length === 0) {
        errors.push(
          `${name()}: no auth.secret_refs; the daemon signs every request (add "auth": {"secret_refs": ["env:CRON_SECRET"]})`,
        );
        continue;
      }
      // each distinct list of refs is resolved once: jobs of an app share their refs, and a
      // `file:` ref read once per job took 1.1 s with 100,000 jobs (0.1 s now)
      const key = refs.length === 1 ? (refs[0] as string) : refs.join('\u0000');
      let one = seen.get(key);
      if (one === undefined) {
        const resolved = resolveSecretRefs(refs, { env });
        const short = shortSecretsError(resolved);
        one = {
          problems: [
            ...resolved.unresolved.map((u) => `secret ref ${refForDisplay(u.ref)}: ${u.reason}`),
            ...(short === null ? [] : [short]),
          ],
          values:
            short === null && resolved.secrets.length === refs.length ? resolved.secrets : null,
        };
        seen.set(key, one);
      }
      for (const p of one.problems) errors.push(`${name()}: ${p}`);
      if (one.values !== null) secrets.set(jobKey(m.app, job.name), one.values);
    }
  }
  return errors.length > 0
    ? { ok: false, errors }
    : { ok: true, secrets, envSecrets, headerSecrets };
}
