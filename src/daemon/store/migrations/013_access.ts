/**
 * Migration 013 (SPEC §18): named tokens, the audit log and pending single sign-on logins
 * (see `access-types.ts`).
 *
 * - `access_tokens`: one row per token name; a stored token is only the SHA-256 of its value
 *   (`hash`, unique); the file token's row (`kind = 'file'`) has no hash at all.
 * - `audit_log`: one row per recorded request, pruned with the runs (`at`).
 * - `login_states`: a begun login's state, PKCE verifier and nonce, deleted when it is used.
 */
import type { Migration } from './migration.js';

/** See the module comment. */
export const m013Access: Migration = {
  version: 13,
  name: 'access',
  sql: `
CREATE TABLE access_tokens (
  name       TEXT    PRIMARY KEY,
  kind       TEXT    NOT NULL CHECK (kind IN ('stored', 'file')),
  hash       TEXT    UNIQUE,
  role       TEXT    NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  apps       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  created_by TEXT,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE TABLE audit_log (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  at        INTEGER NOT NULL,
  who       TEXT    NOT NULL,
  who_kind  TEXT    NOT NULL,
  role      TEXT,
  action    TEXT    NOT NULL,
  app       TEXT,
  job       TEXT,
  run       TEXT,
  source    TEXT    NOT NULL,
  address   TEXT,
  replica   TEXT,
  forwarded INTEGER NOT NULL,
  result    TEXT    NOT NULL,
  status    INTEGER NOT NULL,
  detail    TEXT
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE TABLE login_states (
  state      TEXT    PRIMARY KEY,
  verifier   TEXT    NOT NULL,
  nonce      TEXT    NOT NULL,
  expires_at INTEGER NOT NULL
);
`,
};
