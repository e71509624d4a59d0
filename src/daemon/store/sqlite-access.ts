/**
 * Tokens, the audit log and pending logins of the SQLite store (SPEC §18; the seam is
 * {@link AccessStore}). Every write is one statement or one `BEGIN IMMEDIATE` transaction.
 */
import type Database from 'better-sqlite3';
import { clampListLimit } from './limits.js';
import type {
  AccessStore,
  AuditFilter,
  AuditRecord,
  CreateTokenResult,
  LoginState,
  NewAuditRecord,
  Role,
  TokenRecord,
} from './access-types.js';

const TOKEN_COLUMNS = `name, kind, hash, role, apps, created_at AS createdAt, created_by AS createdBy,
  expires_at AS expiresAt, revoked_at AS revokedAt`;

const AUDIT_COLUMNS = `seq, at, who, who_kind AS whoKind, role, action, app, job, run, source,
  address, replica, forwarded, result, status, detail`;

const AUDIT_FILTERS: readonly (readonly [keyof AuditFilter, string])[] = [
  ['who', 'who = @who'],
  ['action', 'action = @action'],
  ['app', 'app = @app'],
  ['job', 'job = @job'],
  ['since', 'at >= @since'],
  ['beforeSeq', 'seq < @beforeSeq'],
];

type TokenRow = Omit<TokenRecord, 'apps'> & { apps: string };

function token(row: TokenRow | undefined): TokenRecord | null {
  if (!row) return null;
  return { ...row, role: row.role as Role, apps: JSON.parse(row.apps) as string[] };
}

/** The access tables on one SQLite connection (created once the schema is migrated). */
export class SqliteAccess implements AccessStore {
  readonly #db: Database.Database;
  readonly #byHash: Database.Statement;
  readonly #byName: Database.Statement;
  readonly #create: Database.Statement;
  readonly #revoke: Database.Statement;
  readonly #ensureFile: Database.Statement;
  readonly #audit: Database.Statement;
  readonly #pruneAudit: Database.Statement;
  readonly #putLogin: Database.Statement;
  readonly #dropLogins: Database.Statement;
  readonly #takeLogin: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#byHash = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM access_tokens WHERE hash = ?`);
    this.#byName = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM access_tokens WHERE name = ?`);
    // a revoked stored token's name may be taken again; a live one's or the file token's not
    this.#create = db.prepare(
      `INSERT INTO access_tokens (name, kind, hash, role, apps, created_at, created_by,
         expires_at, revoked_at)
       VALUES (@name, @kind, @hash, @role, @apps, @createdAt, @createdBy, @expiresAt, NULL)
       ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, hash = excluded.hash,
         role = excluded.role, apps = excluded.apps, created_at = excluded.created_at,
         created_by = excluded.created_by, expires_at = excluded.expires_at, revoked_at = NULL
       WHERE access_tokens.revoked_at IS NOT NULL AND access_tokens.kind = 'stored'`,
    );
    this.#revoke = db.prepare(
      `UPDATE access_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL`,
    );
    this.#ensureFile = db.prepare(
      `INSERT INTO access_tokens (name, kind, hash, role, apps, created_at)
       VALUES (?, 'file', NULL, 'admin', '[]', ?) ON CONFLICT (name) DO NOTHING`,
    );
    this.#audit = db.prepare(
      `INSERT INTO audit_log (at, who, who_kind, role, action, app, job, run, source, address,
         replica, forwarded, result, status, detail)
       VALUES (@at, @who, @whoKind, @role, @action, @app, @job, @run, @source, @address,
         @replica, @forwarded, @result, @status, @detail)`,
    );
    this.#pruneAudit = db.prepare(`DELETE FROM audit_log WHERE at < ?`);
    this.#putLogin = db.prepare(
      `INSERT INTO login_states (state, verifier, nonce, expires_at)
       VALUES (@state, @verifier, @nonce, @expiresAt)`,
    );
    this.#dropLogins = db.prepare(`DELETE FROM login_states WHERE expires_at <= ?`);
    this.#takeLogin = db.prepare(
      `DELETE FROM login_states WHERE state = ?
       RETURNING state, verifier, nonce, expires_at AS expiresAt`,
    );
  }

  async createToken(t: TokenRecord): Promise<CreateTokenResult> {
    const changes = this.#create.run({ ...t, apps: JSON.stringify(t.apps) }).changes;
    return changes > 0 ? 'created' : 'exists';
  }

  async tokenByHash(hash: string): Promise<TokenRecord | null> {
    return token(this.#byHash.get(hash) as TokenRow | undefined);
  }

  async tokenByName(name: string): Promise<TokenRecord | null> {
    return token(this.#byName.get(name) as TokenRow | undefined);
  }

  async listTokens(): Promise<TokenRecord[]> {
    const rows = this.#db
      .prepare(`SELECT ${TOKEN_COLUMNS} FROM access_tokens ORDER BY name`)
      .all() as TokenRow[];
    return rows.map((r) => token(r) as TokenRecord);
  }

  async revokeToken(name: string, at: number): Promise<boolean> {
    return this.#revoke.run(at, name).changes > 0;
  }

  async ensureFileToken(name: string, at: number): Promise<void> {
    this.#ensureFile.run(name, at);
  }

  async appendAudit(row: NewAuditRecord): Promise<AuditRecord> {
    const seq = this.#audit.run({ ...row, forwarded: row.forwarded ? 1 : 0 }).lastInsertRowid;
    return { ...row, seq: Number(seq) };
  }

  async listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    const conditions = AUDIT_FILTERS.filter(([k]) => filter[k] !== undefined).map(([, c]) => c);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const params: Record<string, unknown> = { limit: clampListLimit(filter.limit) };
    for (const [k] of AUDIT_FILTERS) if (filter[k] !== undefined) params[k] = filter[k];
    const rows = this.#db
      .prepare(`SELECT ${AUDIT_COLUMNS} FROM audit_log ${where} ORDER BY seq DESC LIMIT @limit`)
      .all(params) as (Omit<AuditRecord, 'forwarded'> & { forwarded: number })[];
    return rows.map((r) => ({ ...r, forwarded: r.forwarded === 1 }));
  }

  async pruneAudit(before: number): Promise<number> {
    return this.#pruneAudit.run(before).changes;
  }

  async putLoginState(login: LoginState): Promise<void> {
    this.#db
      .transaction(() => {
        this.#dropLogins.run(Date.now());
        this.#putLogin.run(login);
      })
      .immediate();
  }

  async takeLoginState(state: string, now: number): Promise<LoginState | null> {
    const row = this.#takeLogin.get(state) as LoginState | undefined;
    return row && row.expiresAt > now ? row : null;
  }
}
