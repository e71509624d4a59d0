/**
 * The manifests a daemon runs, as its boot and its reloads read them: every file loaded and
 * checked (an app defined twice is an error), and every app's notifiers resolved (SPEC §12).
 */
import type { Manifest, ManifestError } from '../contract/manifest/types.js';
import { resolveNotifiers, type ResolvedNotifier } from '../notify/resolve.js';
import type { SmtpTarget } from '../notify/smtp.js';
import { loadManifestFiles } from '../source/file.js';
import type { ManifestSources } from './boot-problems.js';

/**
 * Loads every manifest; all errors of all files at once. `sources` maps each app to its file
 * and manifest (to say where a later problem of a job comes from).
 */
export async function loadManifests(files: string[]): Promise<{
  manifests: Manifest[];
  errors: (ManifestError & { file: string })[];
  sources: ManifestSources;
}> {
  const manifests: Manifest[] = [];
  const errors: (ManifestError & { file: string })[] = [];
  const apps = new Map<string, string>();
  const sources = new Map<string, { file: string; manifest: Manifest }>();
  for await (const { path: file, result: r } of loadManifestFiles(files)) {
    if (!r.ok) errors.push(...r.errors.map((e) => ({ ...e, file })));
    else if (apps.has(r.manifest.app))
      errors.push({
        file,
        path: 'app',
        message: `app "${r.manifest.app}" is already defined by ${apps.get(r.manifest.app)}`,
      });
    else {
      apps.set(r.manifest.app, file);
      sources.set(r.manifest.app, { file, manifest: r.manifest });
      manifests.push(r.manifest);
    }
  }
  return { manifests, errors, sources };
}

/** Resolves the notifiers of every manifest (SPEC §12): senders by app and name, or the problems. */
export function resolveAllNotifiers(
  manifests: readonly Manifest[],
  env: NodeJS.ProcessEnv,
  smtpTls: SmtpTarget['tls'] | undefined,
):
  | { ok: true; byApp: Map<string, Map<string, ResolvedNotifier>> }
  | { ok: false; errors: string[] } {
  const byApp = new Map<string, Map<string, ResolvedNotifier>>();
  const errors: string[] = [];
  for (const m of manifests) {
    const r = resolveNotifiers(`app ${m.app}`, m.notifiers, {
      env,
      ...(smtpTls ? { smtpTls } : {}),
    });
    if (r.ok) byApp.set(m.app, r.notifiers);
    else errors.push(...r.errors);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, byApp };
}
