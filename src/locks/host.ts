/** Host identity of this process (SPEC §5.1), recorded in lock holders and used by `Replace`. */
import { hostname } from 'node:os';

/**
 * Returns `$CRONIX_HOST_ID` when set and non-empty, else the hostname. Set
 * `CRONIX_HOST_ID` where hostnames are not unique or not stable (containers,
 * autoscaling groups), so `Replace` never signals a process on another host.
 */
export function hostIdentity(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const id = env['CRONIX_HOST_ID'];
  return id !== undefined && id !== '' ? id : hostname();
}
