/**
 * The access part of the store seam (SPEC §18): named API tokens, the audit log and the pending
 * single sign-on logins. They live in the ledger's store so that every replica of a cluster sees
 * the same tokens (a revocation holds on all of them), the same audit trail, and can finish a
 * login another replica began. None of these writes is fenced by the leader's epoch: a standby
 * records who asked it for something as much as the leader does.
 */

/** What a credential may do (SPEC §18): each role may do everything the one before it may. */
export type Role = 'viewer' | 'operator' | 'admin';

/** Every role, weakest first. */
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

/** Whether `held` is at least `needed`. */
export function roleAtLeast(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

/**
 * One named token. `kind: 'file'` is the token of the token file (`<data-dir>/token` or
 * `--token-file`, the token of before SPEC §18): its value is checked against the file by the
 * daemon and never stored, not even hashed; its row carries its name (`default`), role (admin)
 * and whether it was revoked. `kind: 'stored'` tokens exist only as the SHA-256 of their value.
 */
export interface TokenRecord {
  name: string;
  kind: 'stored' | 'file';
  /** SHA-256 of the token (hex); null for the file token. */
  hash: string | null;
  role: Role;
  /** The apps it may change; empty: every app. */
  apps: string[];
  /** Epoch ms. */
  createdAt: number;
  /** Who created it (a token name or an SSO user); null for the file token. */
  createdBy: string | null;
  /** After this instant the token is refused; null: never expires. */
  expiresAt: number | null;
  /** When it was revoked; null while it is not. */
  revokedAt: number | null;
}

/** The outcome of {@link AccessStore.createToken}. */
export type CreateTokenResult = 'created' | 'exists';

/** Who did something, as the audit log names them. */
export type WhoKind = 'token' | 'user' | 'anonymous';

/** Where a request came from: the API (a script), the CLI, the web UI. */
export type AuditSource = 'api' | 'cli' | 'ui';

/** How a recorded request ended. */
export type AuditResult = 'ok' | 'refused' | 'failed';

/** One row of the audit log. Times are epoch ms. */
export interface AuditRecord {
  /** Position (monotonic, assigned by the store); the paging cursor. */
  seq: number;
  at: number;
  /** A token name, an SSO user, or `anonymous` (`--no-auth`). */
  who: string;
  whoKind: WhoKind;
  /** The role the caller held; null when none (`--no-auth`). */
  role: Role | null;
  /** The verb: `trigger`, `pause`, `token.create`, `login`… */
  action: string;
  app: string | null;
  job: string | null;
  run: string | null;
  /** `from`: the API, the CLI or the web UI. */
  source: AuditSource;
  /** The client's address. */
  address: string | null;
  /** The replica that took the request (a cluster); null for a single daemon. */
  replica: string | null;
  /** True when that replica was a standby that handed the verb to the leader. */
  forwarded: boolean;
  result: AuditResult;
  /** The HTTP status answered. */
  status: number;
  /** A few words: the error's message, the token created… never a secret. */
  detail: string | null;
}

/** A row to append; the store assigns `seq`. */
export type NewAuditRecord = Omit<AuditRecord, 'seq'>;

/** Filter of {@link AccessStore.listAudit}; newest first. */
export interface AuditFilter {
  who?: string;
  action?: string;
  app?: string;
  job?: string;
  /** Only rows at or after this instant. */
  since?: number;
  beforeSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/** A single sign-on login begun and not yet finished (SPEC §18). */
export interface LoginState {
  /** The OAuth `state`, random; also in the browser's login cookie. */
  state: string;
  /** The PKCE code verifier. */
  verifier: string;
  nonce: string;
  /** Epoch ms after which the login cannot be finished. */
  expiresAt: number;
}

/** Tokens, audit log and pending logins (see the module comment). */
export interface AccessStore {
  /**
   * Records a new token. A name held by a live (unrevoked) token, or by the file token, is
   * `exists`; the name of a revoked stored token is taken over.
   */
  createToken(token: TokenRecord): Promise<CreateTokenResult>;
  /** The token whose value hashes to `hash`, revoked or not; null when none does. */
  tokenByHash(hash: string): Promise<TokenRecord | null>;
  tokenByName(name: string): Promise<TokenRecord | null>;
  /** Every token, revoked ones included, by name. */
  listTokens(): Promise<TokenRecord[]>;
  /** Revokes a live token at `at`; false when there is none of that name (or it is revoked). */
  revokeToken(name: string, at: number): Promise<boolean>;
  /** Records the file token's row (admin) unless a row of that name exists. */
  ensureFileToken(name: string, at: number): Promise<void>;
  appendAudit(row: NewAuditRecord): Promise<AuditRecord>;
  listAudit(filter: AuditFilter): Promise<AuditRecord[]>;
  /** Retention (as for runs): deletes the rows older than `before`; returns how many. */
  pruneAudit(before: number): Promise<number>;
  /** Records a begun login (and drops the expired ones). */
  putLoginState(login: LoginState): Promise<void>;
  /**
   * Takes a begun login: returns and deletes it in one step, so a `state` is used at most once,
   * whichever replica the browser comes back to. Null when unknown, used or expired at `now`.
   */
  takeLoginState(state: string, now: number): Promise<LoginState | null>;
}
