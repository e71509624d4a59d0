/**
 * The base of the SQLite store (`sqlite.ts`): the methods it only hands to one of its parts
 * (`sqlite-parts.ts`) — tokens, audit and logins (SPEC §18, `sqlite-access.ts`).
 * `SqliteStore` extends it and gives it the parts once migrated.
 */
import type {
  AuditFilter,
  AuditRecord,
  CreateTokenResult,
  LoginState,
  NewAuditRecord,
  TokenRecord,
} from './access-types.js';
import type { SqliteParts } from './sqlite-parts.js';

/** See the module comment. */
export abstract class SqliteStoreBase {
  /** The store's parts; throws before `migrate()`. */
  protected abstract parts(): SqliteParts;

  // ---- tokens, audit, logins (SPEC §18), see sqlite-access.ts ----

  createToken(token: TokenRecord): Promise<CreateTokenResult> {
    return this.parts().access.createToken(token);
  }

  tokenByHash(hash: string): Promise<TokenRecord | null> {
    return this.parts().access.tokenByHash(hash);
  }

  tokenByName(name: string): Promise<TokenRecord | null> {
    return this.parts().access.tokenByName(name);
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.parts().access.listTokens();
  }

  revokeToken(name: string, at: number): Promise<boolean> {
    return this.parts().access.revokeToken(name, at);
  }

  ensureFileToken(name: string, at: number): Promise<void> {
    return this.parts().access.ensureFileToken(name, at);
  }

  appendAudit(row: NewAuditRecord): Promise<AuditRecord> {
    return this.parts().access.appendAudit(row);
  }

  listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    return this.parts().access.listAudit(filter);
  }

  pruneAudit(before: number): Promise<number> {
    return this.parts().access.pruneAudit(before);
  }

  putLoginState(login: LoginState): Promise<void> {
    return this.parts().access.putLoginState(login);
  }

  takeLoginState(state: string, now: number): Promise<LoginState | null> {
    return this.parts().access.takeLoginState(state, now);
  }
}
