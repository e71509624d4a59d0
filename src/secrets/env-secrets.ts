/**
 * `command.env_from_secrets` (SPEC §11): variable name → secret ref, resolved like
 * `auth.secret_refs` (`env:`, `file:`, `raw:`). Every ref must resolve; a problem names the
 * variable and the ref (`raw:` values hidden), never a value. Any length is accepted (these
 * are passwords and tokens, not HMAC keys); every value is redacted from captured output.
 */
import { refForDisplay, resolveSecretRefs, type SecretResolverDeps } from './resolve.js';

/** The variables' values, or every problem. */
export type EnvSecrets =
  { ok: true; values: Record<string, string> } | { ok: false; problems: string[] };

/** Resolves every entry of an `env_from_secrets` map. */
export function resolveEnvSecrets(
  map: Readonly<Record<string, string>> | undefined,
  deps: Partial<SecretResolverDeps> = {},
): EnvSecrets {
  const values: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, ref] of Object.entries(map ?? {})) {
    const resolved = resolveSecretRefs([ref], deps);
    const value = resolved.secrets[0];
    if (value !== undefined) values[name] = value;
    else
      for (const u of resolved.unresolved)
        problems.push(
          `command.env_from_secrets ${name}: secret ref ${refForDisplay(u.ref)}: ${u.reason}`,
        );
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, values };
}
