/**
 * Maps of names to secret refs, resolved like `auth.secret_refs` (`env:`, `file:`, `raw:`):
 * `command.env_from_secrets` (SPEC §11; variable name → ref) and
 * `request.headers_from_secrets` (header name → ref). Every ref must resolve; a problem names
 * the field, the name and the ref (`raw:` values hidden), never a value. Any length is accepted
 * (these are passwords and API keys, not HMAC keys); every value is redacted from captured
 * output and errors by the callers.
 */
import { refForDisplay, resolveSecretRefs, type SecretResolverDeps } from './resolve.js';

/** The values by name, or every problem. */
export type EnvSecrets =
  { ok: true; values: Record<string, string> } | { ok: false; problems: string[] };

/**
 * Resolves every entry of a name → ref map; `field` names the map in problems, and `check`
 * (optional) refuses a resolved value with a reason that must not quote it.
 */
export function resolveSecretMap(
  map: Readonly<Record<string, string>> | undefined,
  field: string,
  deps: Partial<SecretResolverDeps> = {},
  check?: (value: string) => string | null,
): EnvSecrets {
  const values: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, ref] of Object.entries(map ?? {})) {
    const resolved = resolveSecretRefs([ref], deps);
    const value = resolved.secrets[0];
    const refused = value === undefined ? null : (check?.(value) ?? null);
    if (value !== undefined && refused === null) values[name] = value;
    else if (refused !== null)
      problems.push(`${field} ${name}: secret ref ${refForDisplay(ref)}: ${refused}`);
    else
      for (const u of resolved.unresolved)
        problems.push(`${field} ${name}: secret ref ${refForDisplay(u.ref)}: ${u.reason}`);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, values };
}

/** Resolves every entry of an `env_from_secrets` map. */
export function resolveEnvSecrets(
  map: Readonly<Record<string, string>> | undefined,
  deps: Partial<SecretResolverDeps> = {},
): EnvSecrets {
  return resolveSecretMap(map, 'command.env_from_secrets', deps);
}

const NOT_IN_A_HEADER = /[^\t\u0020-\u007e\u0080-\u00ff]/;

/**
 * Resolves every entry of a `request.headers_from_secrets` map. A value that cannot be sent as
 * a header (a line break, another control character, or a character beyond Latin-1, as in a
 * file with two lines) is refused at start-up, not at the first attempt.
 */
export function resolveHeaderSecrets(
  map: Readonly<Record<string, string>> | undefined,
  deps: Partial<SecretResolverDeps> = {},
): EnvSecrets {
  return resolveSecretMap(map, 'request.headers_from_secrets', deps, (value) =>
    NOT_IN_A_HEADER.test(value)
      ? 'the value holds a character a header cannot carry (a line break or another control character, or one beyond Latin-1)'
      : null,
  );
}
