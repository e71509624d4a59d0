/**
 * Pings (SPEC §15): the per-job ping token and the ping URL. A job's ping token is derived from
 * the report secret (HMAC-SHA256 of `cronix-ping:<app>/<job>`, 32 hex characters), so nothing
 * needs configuring beyond `--report-secret-ref`, each job's token differs (one leaked token
 * pings one job), and rotating the report secret rotates every token (the server accepts the
 * tokens of every configured secret). Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Path prefix of the ping routes. */
export const PING_PATH = '/api/v1/ping';

/** Header a ping token may be sent in instead of `?token=`. */
export const PING_TOKEN_HEADER = 'X-Cronix-Ping-Token';

/** The ping token of `app/job` under a report secret. */
export function pingToken(secret: string, app: string, job: string): string {
  return createHmac('sha256', secret)
    .update(`cronix-ping:${app}/${job}`)
    .digest('hex')
    .slice(0, 32);
}

/** Whether `token` is the ping token of `app/job` under any of the secrets (constant-time). */
export function pingTokenMatches(
  secrets: readonly string[],
  app: string,
  job: string,
  token: string,
): boolean {
  const given = Buffer.from(token.padEnd(32, '\0').slice(0, 64));
  let ok = false;
  for (const s of secrets) {
    if (s.length === 0) continue;
    const want = Buffer.from(pingToken(s, app, job));
    if (given.length === want.length && timingSafeEqual(given, want)) ok = true;
  }
  return ok;
}

/** The URL a cron line or CI job pings on success (`/start`, `/fail`, `/<exit code>` after it). */
export function pingUrl(baseUrl: string, app: string, job: string, secret: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return `${base}${PING_PATH}/${app}/${job}?token=${pingToken(secret, app, job)}`;
}
