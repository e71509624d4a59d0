/**
 * PostgreSQL migration 013 (SPEC §18), as SQLite's 013: named tokens (hashes only), the audit
 * log and pending single sign-on logins (see `access-types.ts`).
 */
import type { Migration } from '../migrations/migration.js';

/** See the module comment. */
export const pg013Access: Migration = {
  version: 13,
  name: 'access',
  sql: `
CREATE TABLE access_tokens (
  name       TEXT   PRIMARY KEY,
  kind       TEXT   NOT NULL CHECK (kind IN ('stored', 'file')),
  hash       TEXT   UNIQUE,
  role       TEXT   NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  apps       TEXT[] NOT NULL,
  created_at BIGINT NOT NULL,
  created_by TEXT,
  expires_at BIGINT,
  revoked_at BIGINT
);
CREATE TABLE audit_log (
  seq       BIGSERIAL PRIMARY KEY,
  at        BIGINT  NOT NULL,
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
  forwarded BOOLEAN NOT NULL,
  result    TEXT    NOT NULL,
  status    INTEGER NOT NULL,
  detail    TEXT
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE TABLE login_states (
  state      TEXT   PRIMARY KEY,
  verifier   TEXT   NOT NULL,
  nonce      TEXT   NOT NULL,
  expires_at BIGINT NOT NULL
);
`,
};
