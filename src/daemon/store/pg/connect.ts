/**
 * Connecting to PostgreSQL (SPEC §10): the store URL
 * `postgres://user@host:5432/db?schema=NAME` (the `schema` parameter is ours:
 * every connection's `search_path` is set to it, so one database holds many
 * independent cronix deployments or test files), a node-postgres pool whose
 * BIGINT columns come back as numbers, and errors turned into one line that
 * names the host, the cause and the fix — never a stack trace.
 */
import pg from 'pg';

/** What a store URL says, with the password never shown. */
export interface PgTarget {
  /** The URL for node-postgres (our `schema` parameter removed). */
  connectionString: string;
  schema: string;
  /** `host:port/database` for messages. */
  display: string;
}

/** A configuration or connection problem of the PostgreSQL store, worded for an operator. */
export class PgStoreError extends Error {
  override name = 'PgStoreError';
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Parses a store URL; throws {@link PgStoreError} naming what is wrong. */
export function parsePgUrl(url: string): PgTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PgStoreError(
      `--store: expected postgres://user@host:5432/database?schema=NAME, found ${JSON.stringify(url.replace(/:[^:@/]*@/, ':***@').slice(0, 200))}`,
    );
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new PgStoreError(`--store: the URL must start with postgres://, found ${u.protocol}//`);
  const schema = u.searchParams.get('schema') ?? 'cronix';
  if (!SCHEMA_NAME.test(schema) || schema.startsWith('pg_'))
    throw new PgStoreError(
      `--store: schema ${JSON.stringify(schema.slice(0, 80))} must be a lower-case SQL name (letters, digits, _) not starting with pg_`,
    );
  u.searchParams.delete('schema');
  const display = `${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname || ''}`;
  return { connectionString: u.toString(), schema, display };
}

/** INT8 (BIGINT, `count(*)`) as a JS number: every value cronix stores is below 2^53. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 && format !== 'binary') return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
};

/** Options of {@link createPool}. */
export interface PoolOptions {
  /** Connections of the pool. Default 4. */
  max?: number;
  /** Connect timeout in ms. Default 5000. */
  connectTimeoutMs?: number;
  /** Called for errors of idle connections (a restarted server): they are dropped and replaced. */
  onIdleError?: (err: Error) => void;
}

/**
 * A session idle inside a transaction this long is ended by the server (its locks released):
 * only a frozen or stuck client leaves one idle, a live one sends its next statement at once.
 */
export const IDLE_IN_TRANSACTION_MS = 5000;

/** The listener a checked-out connection has for its errors (see {@link createPool}). */
const heard = (): void => undefined;

/** A pool whose connections use `schema` and parse BIGINTs as numbers. */
export function createPool(target: PgTarget, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.max ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    options: `-c search_path=${target.schema}`,
    application_name: 'cronix',
    // a process frozen inside a transaction (SIGSTOP, a paused VM) would hold its locks — the
    // lease row's share lock of a fenced write among them — and keep every other replica from
    // taking the lease: the server ends such a session instead (SPEC §10 failover)
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    types,
  });
  pool.on('error', (err) => options.onIdleError?.(err));
  // pg-pool listens for the errors of its idle connections only: a server that ends a session
  // while it is checked out and between two statements (the idle-in-transaction timeout after a
  // freeze, an administrator, a restart) made it emit an `error` nobody heard, which ended the
  // process. Heard while it is out, the error fails the next statement (and the transaction).
  pool.on('acquire', (client) => client.on('error', heard));
  pool.on('release', (_err, client) => client.removeListener('error', heard));
  return pool;
}

/** A client outside the pool (for LISTEN), same settings. */
export function createClient(target: PgTarget, connectTimeoutMs = 5000): pg.Client {
  return new pg.Client({
    connectionString: target.connectionString,
    connectionTimeoutMillis: connectTimeoutMs,
    options: `-c search_path=${target.schema}`,
    application_name: 'cronix',
    types,
  });
}

/**
 * One line for an operator from a driver or server error: the host, the
 * cause, and for a missing privilege the statement and the privilege.
 */
export function explainPgError(err: unknown, target: PgTarget, statement?: string): string {
  const e = err as Partial<pg.DatabaseError> & { code?: string; message?: string };
  const where = `PostgreSQL at ${target.display}`;
  switch (e.code) {
    case 'ECONNREFUSED':
      return `${where}: connection refused (is the server running and listening there?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where}: host not found`;
    case 'ETIMEDOUT':
      return `${where}: connection timed out`;
    case 'ECONNRESET':
      return `${where}: connection reset by the server`;
    case '28P01':
    case '28000':
      return `${where}: authentication failed (${e.message ?? 'check the user and password'})`;
    case '3D000':
      return `${where}: ${e.message ?? 'database does not exist'} (create it first)`;
    case '42501': {
      const what = statement ? `: ${statement.replace(/\s+/g, ' ').trim().slice(0, 120)}` : '';
      return `${where}: permission denied (${e.message ?? 'insufficient privilege'})${what}; grant the user USAGE and CREATE on the schema, or create the schema for it`;
    }
    case '57P01':
    case '57P02':
    case '57P03':
      return `${where}: the server is shutting down or starting up (${e.message ?? e.code})`;
    default:
      if (/timeout/i.test(e.message ?? '')) return `${where}: ${e.message}`;
      return `${where}: ${e.message ?? String(err)}${e.code ? ` (${e.code})` : ''}`;
  }
}

/** `"name"` as an SQL identifier. */
export const ident = (name: string): string => pg.escapeIdentifier(name);
