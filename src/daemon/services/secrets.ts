/**
 * Every service's `env_from_secrets`, resolved before anything runs (SPEC §9 item 2, §17): a
 * ref that cannot be resolved stops the start-up (or keeps the previous set on a reload) with a
 * message naming the service and the ref, never the value.
 */
import type { Manifest } from '../../contract/manifest/types.js';
import { resolveEnvSecrets } from '../../secrets/env-secrets.js';

/** Resolved secrets by `app/service`, or every problem. */
export type ServiceSecrets =
  { ok: true; byService: Map<string, Record<string, string>> } | { ok: false; errors: string[] };

/** Resolves the `env_from_secrets` of every service of the manifests. */
export function resolveServiceSecrets(
  manifests: readonly Manifest[],
  env: Readonly<Record<string, string | undefined>>,
): ServiceSecrets {
  const byService = new Map<string, Record<string, string>>();
  const errors: string[] = [];
  for (const m of manifests)
    for (const [name, service] of Object.entries(m.services ?? {})) {
      if (service.env_from_secrets === undefined) continue;
      const resolved = resolveEnvSecrets(service.env_from_secrets, { env });
      if (resolved.ok) byService.set(`${m.app}/${name}`, resolved.values);
      else errors.push(...resolved.problems.map((p) => `service ${m.app}/${name}: ${p}`));
    }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, byService };
}
