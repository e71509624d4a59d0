/**
 * `cronix tokens create|list|revoke` and `cronix audit` (SPEC §18). Like the other client
 * commands they talk to the daemon's API (never to the store), so they need an admin token
 * (`tokens`) or any token (`audit`), and the daemon records them in its audit log with
 * `from: cli`. Exit 0 done, 1 refused or unreachable, 2 usage.
 */
import { parseInstant } from '../../contract/run.js';
import { EXIT, printJson, printLines } from '../output.js';
import { call, table, type ClientOptions } from './client.js';

const usage = (message: string): number => {
  process.stderr.write(`error: ${message}\n`);
  return EXIT.usage;
};

const ROLES = ['viewer', 'operator', 'admin'];

/** `cronix tokens create NAME --role R [--app A…] [--expires T]`: prints the token once. */
export async function tokensCreateCommand(
  o: ClientOptions,
  name: string,
  f: { role?: string; app?: string[]; expires?: string },
): Promise<number> {
  if (f.role === undefined || !ROLES.includes(f.role))
    return usage(
      `--role must be one of ${ROLES.join(', ')}; found ${JSON.stringify(f.role ?? '')}`,
    );
  if (f.expires !== undefined && parseInstant(f.expires) === null)
    return usage(
      `--expires must be an RFC 3339 instant such as 2027-01-01T00:00:00Z; found ${JSON.stringify(f.expires)}`,
    );
  const json = await call(o, 'POST', '/api/v1/tokens', {
    name,
    role: f.role,
    ...(f.app && f.app.length > 0 ? { apps: f.app } : {}),
    ...(f.expires !== undefined ? { expires_at: f.expires } : {}),
  });
  if (!json) return EXIT.error;
  if (o.output === 'json') printJson(json);
  else
    printLines([
      String(json['token']),
      `token "${String(json['name'])}" (${String(json['role'])}${(json['apps'] as string[]).length > 0 ? `, apps ${(json['apps'] as string[]).join(' ')}` : ''}${json['expires_at'] ? `, expires ${String(json['expires_at'])}` : ''}) created: this is the only time it is shown`,
    ]);
  return EXIT.ok;
}

/** `cronix tokens list`: names, roles, apps, states; never a value. */
export async function tokensListCommand(o: ClientOptions): Promise<number> {
  const json = await call(o, 'GET', '/api/v1/tokens');
  if (!json) return EXIT.error;
  if (o.output === 'json') printJson(json);
  else {
    const rows = (json['tokens'] as Record<string, unknown>[]).map((t) => ({
      ...t,
      apps: (t['apps'] as string[]).length > 0 ? (t['apps'] as string[]).join(',') : '*',
    }));
    printLines(
      table(rows, ['name', 'role', 'apps', 'state', 'expires_at', 'created_by', 'created_at']),
    );
  }
  return EXIT.ok;
}

/** `cronix tokens revoke NAME`: refused at once. */
export async function tokensRevokeCommand(o: ClientOptions, name: string): Promise<number> {
  const json = await call(o, 'DELETE', `/api/v1/tokens/${encodeURIComponent(name)}`);
  if (!json) return EXIT.error;
  if (o.output === 'json') printJson(json);
  else printLines([`token "${name}" revoked at ${String(json['revoked_at'])}`]);
  return EXIT.ok;
}

/** `cronix audit [--who W] [--action A] [--job app/job] [--since T] [--limit N]`. */
export async function auditCommand(
  o: ClientOptions,
  f: { who?: string; action?: string; job?: string; since?: string; limit?: string },
): Promise<number> {
  const q = new URLSearchParams();
  if (f.who) q.set('who', f.who);
  if (f.action) q.set('action', f.action);
  if (f.job) {
    const m = /^([^/.]+)(?:[/.](.+))?$/.exec(f.job);
    if (!m) return usage(`--job must be app or app/job; found ${JSON.stringify(f.job)}`);
    q.set('app', m[1] as string);
    if (m[2]) q.set('job', m[2]);
  }
  if (f.since !== undefined) {
    if (parseInstant(f.since) === null)
      return usage(`--since must be an RFC 3339 instant; found ${JSON.stringify(f.since)}`);
    q.set('since', f.since);
  }
  if (f.limit !== undefined) {
    if (!/^\d+$/.test(f.limit) || Number(f.limit) < 1 || Number(f.limit) > 1000)
      return usage(
        `--limit must be a whole number from 1 to 1000, found ${JSON.stringify(f.limit)}`,
      );
    q.set('limit', f.limit);
  }
  const qs = q.toString();
  const json = await call(o, 'GET', `/api/v1/audit${qs ? `?${qs}` : ''}`);
  if (!json) return EXIT.error;
  if (o.output === 'json') printJson(json);
  else {
    const rows = (json['audit'] as Record<string, unknown>[]).map((r) => ({
      ...r,
      target:
        [r['app'], r['job']].filter((x) => typeof x === 'string').join('/') +
        (r['run'] ? ` ${String(r['run'])}` : ''),
      result: `${String(r['result'])} ${String(r['status'])}`,
      from: `${String(r['from'])}${r['forwarded'] ? ' (forwarded)' : ''}`,
    }));
    printLines(table(rows, ['at', 'who', 'action', 'target', 'from', 'result', 'detail']));
  }
  return EXIT.ok;
}
