/**
 * The access routes (SPEC §18): `POST /api/v1/tokens` (a token, shown once), `GET
 * /api/v1/tokens` (never a value nor a hash), `DELETE /api/v1/tokens/{name}` (revoked at once)
 * — admin only — and `GET /api/v1/audit` (every role). Roles are checked by `authorize.ts`
 * before these run; every mutation here is audited there, with the note these handlers add.
 */
import type { Context, Hono } from 'hono';
import { echo, echoValue, MAX_ECHO } from '../contract/echo.js';
import { NAME_PATTERN } from '../contract/manifest/defaults.js';
import { parseInstant } from '../contract/run.js';
import type { DaemonControl } from '../daemon/control.js';
import { SchedulerError } from '../daemon/core.js';
import {
  ROLES,
  type AuditFilter,
  type AuditRecord,
  type Role,
  type TokenRecord,
} from '../daemon/store/access-types.js';
import type { Store } from '../daemon/store/types.js';
import { callerOf, noteAudit } from './authorize.js';
import { BadRequest } from './serialize.js';
import { hashToken, newTokenValue, type TokenAuth } from './tokens.js';

/** A token's name: what the audit log shows as "who". */
export const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const APP_NAME = new RegExp(NAME_PATTERN);

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A token as the API shows it: never its value, never its hash. */
export function tokenJson(t: TokenRecord, now: number) {
  return {
    name: t.name,
    kind: t.kind,
    role: t.role,
    apps: t.apps,
    created_at: iso(t.createdAt),
    created_by: t.createdBy,
    expires_at: iso(t.expiresAt),
    revoked_at: iso(t.revokedAt),
    state:
      t.revokedAt !== null
        ? 'revoked'
        : t.expiresAt !== null && t.expiresAt <= now
          ? 'expired'
          : 'active',
  };
}

/** An audit row as the API shows it. */
export function auditJson(r: AuditRecord) {
  return {
    seq: r.seq,
    at: iso(r.at),
    who: r.who,
    who_kind: r.whoKind,
    role: r.role,
    action: r.action,
    app: r.app,
    job: r.job,
    run: r.run,
    from: r.source,
    address: r.address,
    replica: r.replica,
    forwarded: r.forwarded,
    result: r.result,
    status: r.status,
    detail: r.detail,
  };
}

async function objectBody(c: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    throw new BadRequest('', 'request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequest('', 'request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The fields of a new token, checked; every problem names its field and value. */
export function newTokenFields(
  body: Record<string, unknown>,
  now: number,
): { name: string; role: Role; apps: string[]; expiresAt: number | null } {
  for (const k of Object.keys(body))
    if (!['name', 'role', 'apps', 'expires_at'].includes(k))
      throw new BadRequest(
        k.slice(0, MAX_ECHO),
        `unknown field ${echo(k)} (expected name, role, apps, expires_at)`,
      );
  const { name, role, apps = [], expires_at: expires = null } = body;
  if (typeof name !== 'string' || !TOKEN_NAME.test(name))
    throw new BadRequest(
      'name',
      `expected 1 to 64 letters, digits, ".", "_" or "-" (not first), found ${echoValue(name)}`,
    );
  if (typeof role !== 'string' || !ROLES.includes(role as Role))
    throw new BadRequest('role', `expected one of ${ROLES.join(', ')}, found ${echoValue(role)}`);
  if (!Array.isArray(apps) || apps.some((a) => typeof a !== 'string' || !APP_NAME.test(a)))
    throw new BadRequest(
      'apps',
      `expected a list of app names (${NAME_PATTERN}), found ${echoValue(apps)}`,
    );
  if (role === 'admin' && apps.length > 0)
    throw new BadRequest(
      'apps',
      'an admin token manages tokens for every app: it cannot be limited to apps (give operator or viewer)',
    );
  let expiresAt: number | null = null;
  if (expires !== null) {
    expiresAt =
      typeof expires === 'string' && /^\d{4}-\d{2}-\d{2}[Tt ]/.test(expires)
        ? parseInstant(expires)
        : null;
    if (expiresAt === null)
      throw new BadRequest(
        'expires_at',
        `expected an RFC 3339 instant such as "2027-01-01T00:00:00Z", found ${echoValue(expires)}`,
      );
    if (expiresAt <= now)
      throw new BadRequest('expires_at', `${echoValue(expires)} is not in the future`);
  }
  return { name, role: role as Role, apps: [...new Set(apps as string[])].sort(), expiresAt };
}

function auditFilter(c: Context): AuditFilter {
  const q = c.req.query();
  const filter: AuditFilter = {};
  for (const [k, v] of Object.entries(q)) {
    if (k === 'who' || k === 'action' || k === 'app' || k === 'job') filter[k] = String(v);
    else if (k === 'since') {
      const at = /^\d{4}-\d{2}-\d{2}[Tt ]/.test(v) ? parseInstant(v) : null;
      if (at === null)
        throw new BadRequest('since', `expected an RFC 3339 instant, found ${echo(v)}`);
      filter.since = at;
    } else if (k === 'limit' || k === 'before') {
      const n = Number(v);
      if (!/^\d+$/.test(v) || n < 1 || (k === 'limit' && n > 1000))
        throw new BadRequest(
          k,
          k === 'limit'
            ? `expected an integer from 1 to 1000, found ${echo(v)}`
            : `expected the seq of the last row of the previous page, found ${echo(v)}`,
        );
      if (k === 'limit') filter.limit = n;
      else filter.beforeSeq = n;
    } else throw new BadRequest(k.slice(0, MAX_ECHO), `unknown query parameter ${echo(k)}`);
  }
  return filter;
}

/** Mounts the token and audit routes. */
export function mountAccessApi(
  app: Hono,
  deps: {
    store: Store;
    scheduler: DaemonControl;
    tokens: TokenAuth | null;
    warn: (message: string) => void;
    /** Told after a revocation: the streams it opened end now (`stream-guard.ts`). */
    revoked?: () => void;
  },
): void {
  const { store, scheduler } = deps;

  app.post('/api/v1/tokens', async (c) => {
    const now = scheduler.now();
    const fields = newTokenFields(await objectBody(c), now);
    noteAudit(c, {
      detail: `token "${fields.name}" (${fields.role}${fields.apps.length > 0 ? `, apps ${fields.apps.join(' ')}` : ''})`,
    });
    const value = newTokenValue();
    const record: TokenRecord = {
      ...fields,
      kind: 'stored',
      hash: hashToken(value),
      createdAt: now,
      createdBy: callerOf(c)?.principal.who ?? null,
      revokedAt: null,
    };
    if ((await store.createToken(record)) === 'exists')
      throw new SchedulerError(
        'conflict',
        `a token named ${echo(fields.name)} exists; revoke it first or choose another name`,
      );
    deps.tokens?.forget();
    c.header('cache-control', 'no-store');
    return c.json({ ...tokenJson(record, now), token: value }, 201);
  });

  app.get('/api/v1/tokens', async (c) => {
    const now = scheduler.now();
    return c.json({ tokens: (await store.listTokens()).map((t) => tokenJson(t, now)) });
  });

  app.delete('/api/v1/tokens/:name', async (c) => {
    const name = c.req.param('name');
    noteAudit(c, { detail: `token "${name.slice(0, 64)}"` });
    const at = scheduler.now();
    if (!(await store.revokeToken(name, at))) {
      const row = await store.tokenByName(name);
      throw new SchedulerError(
        'not_found',
        row ? `token ${echo(name)} is already revoked` : `no token named ${echo(name)}`,
      );
    }
    deps.tokens?.forget(); // refused on this replica from this request on
    deps.revoked?.();
    return c.json({ name, revoked_at: iso(at) });
  });

  app.get('/api/v1/audit', async (c) => {
    const rows = await store.listAudit(auditFilter(c));
    return c.json({ audit: rows.map(auditJson) });
  });
}
