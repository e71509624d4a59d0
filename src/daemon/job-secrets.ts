/**
 * Resolves the secrets of every job before the daemon schedules anything
 * (SPEC §9 item 2): an HTTP job whose `auth.secret_refs` is empty, or any of
 * whose refs does not resolve, or resolves to fewer than 16 bytes (the
 * shim's rule, `shortSecretsError`), is a configuration error named by job and
 * ref — never a run that fails later with `internal_error`. A command job signs
 * nothing and needs no refs (SPEC §11), but every ref of its
 * `command.env_from_secrets` must resolve, the same way. Messages name refs
 * (with `raw:` values hidden), never secret values.
 */
import type { Manifest } from '../contract/manifest/types.js';
import { resolveEnvSecrets } from '../secrets/env-secrets.js';
import { refForDisplay, resolveSecretRefs, shortSecretsError } from '../secrets/resolve.js';
import { jobKey } from './registry.js';

/** Signing secrets of HTTP jobs and `env_from_secrets` of command jobs, per `app/job`; or every problem found. */
export type JobSecrets =
  | {
      ok: true;
      secrets: Map<string, string[]>;
      envSecrets: Map<string, Record<string, string>>;
    }
  | { ok: false; errors: string[] };

/** Resolves every job's secret refs against `env` (and the disk for `file:` refs). */
export function resolveJobSecrets(
  manifests: readonly Manifest[],
  env: Readonly<Record<string, string | undefined>>,
): JobSecrets {
  const secrets = new Map<string, string[]>();
  const envSecrets = new Map<string, Record<string, string>>();
  const errors: string[] = [];
  for (const m of manifests) {
    for (const job of m.jobs) {
      const name = `job ${m.app}/${job.name}`;
      if (job.command !== undefined) {
        const resolved = resolveEnvSecrets(job.command.env_from_secrets, { env });
        if (resolved.ok) envSecrets.set(jobKey(m.app, job.name), resolved.values);
        else errors.push(...resolved.problems.map((p) => `${name}: ${p}`));
        continue;
      }
      const refs = job.auth.secret_refs;
      if (refs.length === 0) {
        errors.push(
          `${name}: no auth.secret_refs; the daemon signs every request (add "auth": {"secret_refs": ["env:CRON_SECRET"]})`,
        );
        continue;
      }
      const resolved = resolveSecretRefs(refs, { env });
      for (const u of resolved.unresolved)
        errors.push(`${name}: secret ref ${refForDisplay(u.ref)}: ${u.reason}`);
      const short = shortSecretsError(resolved);
      if (short !== null) errors.push(`${name}: ${short}`);
      const values = short === null ? resolved.secrets : [];
      if (values.length === refs.length) secrets.set(jobKey(m.app, job.name), values);
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, secrets, envSecrets };
}
