/**
 * Tokens, the audit log and pending logins of the PostgreSQL store (SPEC §18; the seam is
 * {@link AccessStore}), on the store's pool. Unfenced: a standby records as much as the leader.
 */
import type pg from 'pg';
import { clampListLimit } from '../limits.js';
import type {
  AccessStore,
  AuditFilter,
  AuditRecord,
  CreateTokenResult,
  LoginState,
  NewAuditRecord,
  TokenRecord,
} from '../access-types.js';

const TOKEN_COLUMNS = `name, kind, hash, role, apps, created_at AS "createdAt",
  created_by AS "createdBy", expires_at AS "expiresAt", revoked_at AS "revokedAt"`;

const AUDIT_COLUMNS = `seq, at, who, who_kind AS "whoKind", role, action, app, job, run, source,
  address, replica, forwarded, result, status, detail`;

const AUDIT_FILTERS: readonly (readonly [keyof AuditFilter, string])[] = [
  ['who', 'who ='],
  ['action', 'action ='],
  ['app', 'app ='],
  ['job', 'job ='],
  ['since', 'at >='],
  ['beforeSeq', 'seq <'],
];

/** The access tables of one schema (see the module comment). */
export class PgAccess implements AccessStore {
  constructor(private readonly pool: pg.Pool) {}

  async createToken(t: TokenRecord): Promise<CreateTokenResult> {
    // a revoked stored token's name may be taken again; a live one's or the file token's not
    const r = await this.pool.query(
      `INSERT INTO access_tokens (name, kind, hash, role, apps, created_at, created_by,
         expires_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)
       ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, hash = excluded.hash,
         role = excluded.role, apps = excluded.apps, created_at = excluded.created_at,
         created_by = excluded.created_by, expires_at = excluded.expires_at, revoked_at = NULL
       WHERE access_tokens.revoked_at IS NOT NULL AND access_tokens.kind = 'stored'`,
      [t.name, t.kind, t.hash, t.role, t.apps, t.createdAt, t.createdBy, t.expiresAt],
    );
    return (r.rowCount ?? 0) > 0 ? 'created' : 'exists';
  }

  async tokenByHash(hash: string): Promise<TokenRecord | null> {
    const { rows } = await this.pool.query<TokenRecord>(
      `SELECT ${TOKEN_COLUMNS} FROM access_tokens WHERE hash = $1`,
      [hash],
    );
    return rows[0] ?? null;
  }

  async tokenByName(name: string): Promise<TokenRecord | null> {
    const { rows } = await this.pool.query<TokenRecord>(
      `SELECT ${TOKEN_COLUMNS} FROM access_tokens WHERE name = $1`,
      [name],
    );
    return rows[0] ?? null;
  }

  async listTokens(): Promise<TokenRecord[]> {
    const { rows } = await this.pool.query<TokenRecord>(
      `SELECT ${TOKEN_COLUMNS} FROM access_tokens ORDER BY name`,
    );
    return rows;
  }

  async revokeToken(name: string, at: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE access_tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL`,
      [at, name],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async ensureFileToken(name: string, at: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO access_tokens (name, kind, hash, role, apps, created_at)
       VALUES ($1, 'file', NULL, 'admin', '{}', $2) ON CONFLICT (name) DO NOTHING`,
      [name, at],
    );
  }

  async appendAudit(row: NewAuditRecord): Promise<AuditRecord> {
    const { rows } = await this.pool.query<{ seq: number }>(
      `INSERT INTO audit_log (at, who, who_kind, role, action, app, job, run, source, address,
         replica, forwarded, result, status, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING seq`,
      [
        row.at,
        row.who,
        row.whoKind,
        row.role,
        row.action,
        row.app,
        row.job,
        row.run,
        row.source,
        row.address,
        row.replica,
        row.forwarded,
        row.result,
        row.status,
        row.detail,
      ],
    );
    return { ...row, seq: (rows[0] as { seq: number }).seq };
  }

  async listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    const params: unknown[] = [];
    const conditions: string[] = [];
    for (const [k, cond] of AUDIT_FILTERS) {
      if (filter[k] === undefined) continue;
      params.push(filter[k]);
      conditions.push(`${cond} $${params.length}`);
    }
    params.push(clampListLimit(filter.limit));
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const { rows } = await this.pool.query<AuditRecord>(
      `SELECT ${AUDIT_COLUMNS} FROM audit_log ${where} ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    return rows;
  }

  async pruneAudit(before: number): Promise<number> {
    const r = await this.pool.query(`DELETE FROM audit_log WHERE at < $1`, [before]);
    return r.rowCount ?? 0;
  }

  async putLoginState(login: LoginState): Promise<void> {
    await this.pool.query(`DELETE FROM login_states WHERE expires_at <= $1`, [Date.now()]);
    await this.pool.query(
      `INSERT INTO login_states (state, verifier, nonce, expires_at) VALUES ($1, $2, $3, $4)`,
      [login.state, login.verifier, login.nonce, login.expiresAt],
    );
  }

  async takeLoginState(state: string, now: number): Promise<LoginState | null> {
    // one statement: of two replicas given the same state, one gets the row, the other none
    const { rows } = await this.pool.query<LoginState>(
      `DELETE FROM login_states WHERE state = $1
       RETURNING state, verifier, nonce, expires_at AS "expiresAt"`,
      [state],
    );
    const row = rows[0];
    return row && row.expiresAt > now ? row : null;
  }
}
