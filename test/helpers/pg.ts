/**
 * PostgreSQL for tests: the shared server on 127.0.0.1:5432 (or
 * `$CRONIX_TEST_PG_URL`), isolated by a fresh schema per test or file, and
 * private clusters (`initdb` + `pg_ctl` in a temp dir, on a free port) for
 * tests that stop or restart the database.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './sink.js';

/** The shared server's database URL (no schema). */
export const PG_URL =
  process.env['CRONIX_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh schema name. */
export const schemaName = (tag = 't'): string => `${tag}_${randomBytes(6).toString('hex')}`;

/** `url` with `?schema=`. */
export const withSchema = (url: string, schema: string): string =>
  `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;

/**
 * Drops a schema and everything in it. Retried on a deadlock: the backends of daemons a test has
 * just SIGKILLed can still be inside a transaction on the schema's tables (seen in a CI run).
 */
export async function dropSchema(schema: string, url = PG_URL): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '40P01' || attempt >= 5) throw err;
    } finally {
      await client.end();
    }
    await new Promise((r) => setTimeout(r, 200 * attempt));
  }
}

/** Runs one query on `url` (a fresh connection). */
export async function pgQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(
  sql: string,
  params: unknown[] = [],
  url = PG_URL,
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The directory of PostgreSQL's server binaries (`initdb`, `pg_ctl`). */
export function pgBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort() : [];
  const v = versions.at(-1);
  if (!v) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  return join(root, v, 'bin');
}

/** A private PostgreSQL cluster in a temp dir, on its own port. */
export interface PrivateCluster {
  port: number;
  url: string;
  dir: string;
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  destroy(): void;
}

/** `initdb` + `pg_ctl start` on a free port; trust auth; the OS user must not be root for initdb. */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const bin = pgBin();
  const dir = mkdtempSync(join(tmpdir(), 'cronix-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const asUser = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  if (asUser.length > 0) execFileSync('chown', ['-R', 'postgres', dir]);
  const run = (cmd: string, args: string[]): void => {
    const [exe, ...rest] = [...asUser, join(bin, cmd), ...args];
    const r = spawnSync(exe as string, rest, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const start = (): void =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-w',
      'start',
    ]);
  start();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    stop: (mode = 'fast') => run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']),
    start,
    destroy() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
