/**
 * Things a valid manifest may hold that will not work as the user expects:
 * reported by `cronix validate` as warnings, never as errors (the v1 protocol
 * allows them).
 */
import type { Manifest } from './types.js';

/** One warning, naming the job it is about. */
export interface ManifestWarning {
  job: string;
  message: string;
}

/** The warnings of a normalized manifest, in job order. */
export function manifestWarnings(manifest: Manifest): ManifestWarning[] {
  const out: ManifestWarning[] = [];
  for (const job of manifest.jobs) {
    if (job.policy.concurrency_scope === 'global')
      out.push({
        job: job.name,
        message:
          'concurrency_scope global takes a Redis lock shared by every daemon and host: cronix serve refuses to start without --lock-backend redis://host:6379 (or CRONIX_REDIS_URL), and so does cronix trigger (apply --lock-backend); use scope "host" (the default) when one daemon or one host runs the job',
      });
    if (job.command !== undefined) {
      // a command job signs nothing (SPEC §11): its refs would never be read
      if (job.auth.secret_refs.length > 0)
        out.push({
          job: job.name,
          message:
            'auth.secret_refs is not used by a command job (nothing is signed); pass secrets to the command with command.env_from_secrets',
        });
      continue;
    }
    if (job.auth.secret_refs.length === 0)
      out.push({
        job: job.name,
        message:
          'auth.secret_refs is empty: its requests would go unsigned, so cronix serve refuses to start it ' +
          '(add "auth": {"secret_refs": ["env:CRON_SECRET"]})',
      });
  }
  return out;
}
