/**
 * Services (SPEC §17) under a host scheduler: refused, each with the reason. A host backend fires
 * jobs and keeps nothing running, and what a service means in cronix — restarts with backoff and
 * ledger rows, crash-loop notifications, reloads that restart one changed instance at a time,
 * leftovers stopped after a crash, one leader running them — is the daemon's work. Rendering
 * them as systemd services would give another product under the same name (systemd's own
 * `Restart=` rules, no ledger, no notifications), so no backend renders them (docs/services.md).
 * Pure.
 */
import type { Manifest } from '../contract/manifest/types.js';
import type { Refusal } from './plan.js';

/** One refusal per service of the manifest; empty when it has none. */
export function serviceRefusals(manifest: Manifest, backend: string): Refusal[] {
  return Object.keys(manifest.services ?? {}).map((name) => ({
    id: `services/${name}`,
    schedule: '',
    reasons: [
      `service ${manifest.app}/${name} runs only under cronix serve, which supervises it (restarts, ledger, crash-loop notifications); the ${backend} backend fires jobs and keeps nothing running. Run this manifest with cronix serve, or move its services to a manifest of their own for the daemon`,
    ],
  }));
}
