/**
 * The PostgreSQL store: the shared store contract on a fresh schema per test
 * (the same suite SQLite passes), plus what only PostgreSQL has: migrations
 * under an advisory lock, a schema from a newer cronix refused, the fence.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SchemaTooNewError } from '../../src/daemon/store/migrations/migration.js';
import { createPool, parsePgUrl } from '../../src/daemon/store/pg/connect.js';
import { PG_MIGRATIONS } from '../../src/daemon/store/pg/migrate.js';
import { inTransaction } from '../../src/daemon/store/pg/transaction.js';
import { FencedError, PostgresStore } from '../../src/daemon/store/postgres.js';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from '../helpers/pg.js';
import { storeContract } from './store-contract.js';
import { insertRuns, newRun } from './store-fixtures.js';

storeContract('postgres (schema per test)', async () => {
  const schema = schemaName('contract');
  return {
    store: PostgresStore.open(withSchema(PG_URL, schema)),
    another: () => PostgresStore.open(withSchema(PG_URL, schema)),
    cleanup: () => dropSchema(schema),
  };
});

describe('PostgresStore', () => {
  const schemas: string[] = [];
  const open = (): PostgresStore => {
    const schema = schemaName('store');
    schemas.push(schema);
    return PostgresStore.open(withSchema(PG_URL, schema));
  };
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  it('replicas migrating at once serialize on the advisory lock; each version is applied once', async () => {
    const stores = [open()];
    const schema = schemas.at(-1)!;
    for (let i = 0; i < 4; i++) stores.push(PostgresStore.open(withSchema(PG_URL, schema)));
    await Promise.all(stores.map((s) => s.migrate()));
    const rows = await pgQuery<{ version: number }>(
      `SELECT version FROM ${schema}.schema_migrations ORDER BY version`,
    );
    expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
    for (const s of stores) await s.close();
  });

  it('applies a missing version below the newest one applied (numbers given to branches)', async () => {
    const store = open();
    const schema = schemas.at(-1)!;
    const { migratePg } = await import('../../src/daemon/store/pg/migrate.js');
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const late = { version: 2, name: 'late', sql: 'CREATE TABLE late_one (a INTEGER);' };
      const first = [PG_MIGRATIONS[0]!, { version: 9, name: 'early', sql: 'SELECT 1;' }];
      expect(await migratePg(client, schema, () => 0, first)).toEqual([1, 9]);
      expect(await migratePg(client, schema, () => 0, [...first, late])).toEqual([2]);
      expect(await migratePg(client, schema, () => 0, [...first, late])).toEqual([]);
      await pgQuery(`SELECT a FROM ${schema}.late_one`);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('refuses a schema written by a newer cronix, naming both versions', async () => {
    const store = open();
    await store.migrate();
    await pgQuery(`INSERT INTO ${schemas.at(-1)}.schema_migrations VALUES (99, 'future', 0)`);
    const again = PostgresStore.open(withSchema(PG_URL, schemas.at(-1)!));
    await expect(again.migrate()).rejects.toThrow(SchemaTooNewError);
    await expect(again.migrate()).rejects.toThrow(
      `version 99 is newer than this cronix knows (${Math.max(...PG_MIGRATIONS.map((m) => m.version))})`,
    );
    await again.close();
    await store.close();
  });

  it('an unreachable server is explained with host and cause', async () => {
    const store = PostgresStore.open('postgres://postgres@127.0.0.1:1/postgres?schema=x');
    await expect(store.migrate()).rejects.toThrow(
      'PostgreSQL at 127.0.0.1:1/postgres: connection refused (is the server running and listening there?)',
    );
    await store.close();
  });

  it('a session the server ends inside a transaction fails that transaction, not the process', async () => {
    // the idle-in-transaction timeout ends a frozen leader's session this way when it wakes: with
    // no listener on the checked-out connection, its `error` event ended the process
    const target = parsePgUrl(withSchema(PG_URL, 'public'));
    const pool = createPool(target, { max: 1 });
    try {
      const client = await pool.connect();
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!
        .pid;
      const ended = new Promise((r) => client.once('end', r));
      const work = inTransaction(
        client,
        target,
        null,
        () => undefined,
        async (c) => {
          await pgQuery('SELECT pg_terminate_backend($1)', [pid]);
          await ended; // the termination arrived while no statement was running
          return c.query('SELECT 1');
        },
      );
      await expect(work).rejects.toThrow(/PostgreSQL at|not queryable|terminated/);
      // the broken connection left the pool; the next one works
      const again = await pool.connect();
      expect((await again.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
      expect(again.listenerCount('error')).toBe(1);
      again.release();
      expect(again.listenerCount('error')).toBe(1); // the pool's idle listener, ours removed
    } finally {
      await pool.end();
    }
  });

  it('a fenced write goes through only while the lease is that holder’s, at that epoch', async () => {
    const store = open();
    await store.migrate();
    const schema = schemas.at(-1)!;
    await pgQuery(
      `INSERT INTO ${schema}.lease VALUES ('leader', 'a', 7, now() + interval '15 seconds', now())`,
    );
    const ok = store.fenced({ holder: 'a', epoch: 7 });
    await insertRuns(ok, [newRun()]);
    const stale = store.fenced({ holder: 'a', epoch: 6 });
    await expect(insertRuns(stale, [newRun()])).rejects.toThrow(FencedError);
    await expect(store.fenced({ holder: 'b', epoch: 7 }).endCrashed(0, 'x')).rejects.toThrow(
      FencedError,
    );
    await pgQuery(`UPDATE ${schema}.lease SET expires_at = now() - interval '1 second'`);
    await expect(insertRuns(ok, [newRun()])).rejects.toThrow(FencedError);
    await pgQuery(`UPDATE ${schema}.lease SET expires_at = now() + interval '15 seconds'`);
    ok.revoke();
    await expect(insertRuns(ok, [newRun()])).rejects.toThrow(/revoked/);
    expect(await store.listRuns({})).toHaveLength(1); // only the first write
    await store.close();
  });
});
