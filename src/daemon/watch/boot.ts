/**
 * What `serve --watch` adds to the daemon's boot (SPEC §15): the watched manifests, loaded like
 * the served ones (files or directories, all errors at once) and never overlapping them (an
 * app is fired by the daemon or by host schedulers, not both), and the report secrets,
 * resolved before anything is scheduled like every other secret (§9 item 2).
 */
import type { Manifest } from '../../contract/manifest/types.js';
import { refForDisplay, resolveSecretRefs, shortSecretsError } from '../../secrets/resolve.js';
import { loadManifests } from '../boot-manifests.js';
import type { ManifestSources } from '../boot-problems.js';

/** A manifest problem with the file it comes from. */
export interface FileProblem {
  file: string;
  path: string;
  message: string;
}

/** The served and the watched manifests, or every problem of both. */
export async function loadServedAndWatched(
  served: string[],
  watched: string[],
): Promise<{
  manifests: Manifest[];
  watched: Manifest[];
  sources: ManifestSources;
  errors: FileProblem[];
}> {
  const a = await loadManifests(served);
  const b = watched.length > 0 ? await loadManifests(watched) : null;
  const errors: FileProblem[] = [...a.errors, ...(b?.errors ?? [])];
  const sources: ManifestSources = new Map([...a.sources, ...(b?.sources ?? [])]);
  for (const m of b?.manifests ?? []) {
    const servedFrom = a.sources.get(m.app);
    if (servedFrom)
      errors.push({
        file: b?.sources.get(m.app)?.file ?? '?',
        path: 'app',
        message: `app "${m.app}" is both served (${servedFrom.file}) and watched: the daemon fires an app's jobs or watches them, not both`,
      });
  }
  return { manifests: a.manifests, watched: b?.manifests ?? [], sources, errors };
}

/** The report secrets of `--report-secret-ref`, or the problem (naming refs, never values). */
export function reportSecrets(
  refs: readonly string[],
  watching: boolean,
  env: NodeJS.ProcessEnv,
): { ok: true; secrets: string[] } | { ok: false; error: string } {
  if (refs.length === 0)
    return watching
      ? {
          ok: false,
          error:
            '--watch needs --report-secret-ref REF: reports and pings are authenticated by that secret (env:NAME, file:/path)',
        }
      : { ok: true, secrets: [] };
  const resolved = resolveSecretRefs(refs, { env });
  if (resolved.unresolved.length > 0)
    return {
      ok: false,
      error: resolved.unresolved
        .map((u) => `--report-secret-ref ${refForDisplay(u.ref)}: ${u.reason}`)
        .join('\n'),
    };
  const short = shortSecretsError(resolved);
  if (short !== null) return { ok: false, error: `--report-secret-ref: ${short}` };
  return { ok: true, secrets: resolved.secrets };
}
