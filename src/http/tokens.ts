/**
 * Named API tokens (SPEC §18): their values, their hashes, and who a presented token is.
 *
 * - A token is `cronix_` + 32 random bytes (256 bits) in base64url. Only its **SHA-256** is
 *   stored. A slow password hash (scrypt, argon2) protects guessable secrets; a 256-bit random
 *   value cannot be guessed from its hash whatever the hash's speed, and a fast hash lets every
 *   request be checked with one indexed lookup (the usual choice for API tokens: GitHub, Stripe).
 * - The token of the token file (`<data-dir>/token`, `--token-file`: the token of before §18)
 *   stays valid as the admin token named `default`: it is compared with the file, never stored,
 *   not even hashed (a user may have written a short one there). Its row in the store says only
 *   whether it was revoked.
 * - **Revocation** is read from the store: a token's row is cached for at most
 *   {@link TOKEN_CACHE_MS} (one store read per token per second, whatever the request rate), and
 *   the replica that revokes drops its cached row at once. So a revoked token is refused at once
 *   by the replica that revoked it, within {@link TOKEN_CACHE_MS} by every other replica, and
 *   after any restart (the row is in the store).
 * - A web UI session made with a token is **bound to that token**, not to its name: the session
 *   carries the token's {@link tokenBinding} and holds only while the live token of that name has
 *   the same one. A revoked token's sessions so stay dead when a new token takes its name.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AccessStore, Role, TokenRecord, WhoKind } from '../daemon/store/access-types.js';
import { safeEqual } from './session.js';

/** The name of the token file's token. */
export const DEFAULT_TOKEN_NAME = 'default';
/** How long a token's row is trusted without reading the store again. */
export const TOKEN_CACHE_MS = 1000;
/** Rows cached at most (past it the cache starts afresh). */
const MAX_CACHED = 10_000;

/** A new token value (see the module comment). */
export function newTokenValue(): string {
  return `cronix_${randomBytes(32).toString('base64url')}`;
}

/** The stored form of a token value: SHA-256, hex. */
export function hashToken(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** The binding of the file token's sessions (the file token's name can never be taken over). */
export const FILE_BINDING = 'file';

/**
 * What a session made with the token `row` carries to name that very token: derived from its hash
 * (never the hash itself), so two tokens that share a name one after the other never share it.
 */
export function tokenBinding(row: Pick<TokenRecord, 'kind' | 'hash'>): string {
  if (row.kind === 'file' || row.hash === null) return FILE_BINDING;
  return createHash('sha256')
    .update(`cronix session binding\0${row.hash}`, 'utf8')
    .digest('base64url')
    .slice(0, 22);
}

/** A token that holds: whom it acts for, and the binding of the sessions it opens. */
export type TokenCheck =
  { ok: true; principal: Principal; binding: string } | { ok: false; why: TokenRefusal };

/** Who a request acts for, and what they may do. */
export interface Principal {
  /** A token name, an SSO user, or `anonymous` (`--no-auth`). */
  who: string;
  whoKind: WhoKind;
  role: Role;
  /** The apps it may change; empty: every app. */
  apps: string[];
}

/** The principal of `--no-auth`: everything, as nobody in particular. */
export const ANONYMOUS: Principal = {
  who: 'anonymous',
  whoKind: 'anonymous',
  role: 'admin',
  apps: [],
};

/** Why a token was refused (for the log; the client is told only that it was wrong). */
export type TokenRefusal = 'unknown' | 'revoked' | 'expired';

/** Decides who a presented token is, from the token file and the store. */
export class TokenAuth {
  private readonly cache = new Map<string, { at: number; row: TokenRecord | null }>();

  constructor(
    private readonly store: AccessStore,
    /** The token file's token; null under `--no-auth`. */
    private readonly fileToken: string | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** The principal of a token value (and its sessions' binding), or why it is refused. */
  async check(value: string): Promise<TokenCheck> {
    if (this.fileToken !== null && safeEqual(value, this.fileToken)) {
      // its row exists from the first start; without one (a store never booted) it is live
      const row = await this.row(`n:${DEFAULT_TOKEN_NAME}`, () =>
        this.store.tokenByName(DEFAULT_TOKEN_NAME),
      );
      if (row?.kind === 'file' && row.revokedAt !== null) return { ok: false, why: 'revoked' };
      return {
        ok: true,
        principal: { who: DEFAULT_TOKEN_NAME, whoKind: 'token', role: 'admin', apps: [] },
        binding: FILE_BINDING,
      };
    }
    if (!value.startsWith('cronix_')) return { ok: false, why: 'unknown' };
    const hash = hashToken(value);
    const row = await this.row(`h:${hash}`, () => this.store.tokenByHash(hash), false);
    return this.live(row);
  }

  /**
   * The principal of a session made with the token `name` whose binding was `binding`, or why it
   * no longer holds: that token was revoked or expired — or replaced, when the live token of that
   * name has another binding (`revoked`: the session's own token was). A session without a
   * binding (made before sessions were bound) holds only for the file token, whose name cannot
   * be taken over.
   */
  async named(name: string, binding: string | null): Promise<TokenCheck> {
    const row = await this.row(`n:${name}`, () => this.store.tokenByName(name));
    if (row === null && name === DEFAULT_TOKEN_NAME && this.fileToken !== null)
      return binding === null || binding === FILE_BINDING
        ? {
            ok: true,
            principal: { who: name, whoKind: 'token', role: 'admin', apps: [] },
            binding: FILE_BINDING,
          }
        : { ok: false, why: 'unknown' };
    const checked = this.live(row);
    if (!checked.ok) return checked;
    const held = binding ?? (row?.kind === 'file' ? FILE_BINDING : null);
    return held === checked.binding ? checked : { ok: false, why: 'revoked' };
  }

  /** Forgets what is cached (this replica revoked or created a token). */
  forget(): void {
    this.cache.clear();
  }

  private live(row: TokenRecord | null): TokenCheck {
    if (row === null) return { ok: false, why: 'unknown' };
    if (row.revokedAt !== null) return { ok: false, why: 'revoked' };
    if (row.expiresAt !== null && row.expiresAt <= this.now()) return { ok: false, why: 'expired' };
    return {
      ok: true,
      principal: { who: row.name, whoKind: 'token', role: row.role, apps: row.apps },
      binding: tokenBinding(row),
    };
  }

  /** A row, from the cache when it is fresh; unknown tokens are not cached (guesses). */
  private async row(
    key: string,
    read: () => Promise<TokenRecord | null>,
    cacheMisses = true,
  ): Promise<TokenRecord | null> {
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < TOKEN_CACHE_MS && now >= hit.at) return hit.row;
    const row = await read();
    if (row !== null || cacheMisses) {
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(key, { at: now, row });
    }
    return row;
  }
}
