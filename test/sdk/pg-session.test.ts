/**
 * `runOncePg` with a pool whose checked-out session the server ends inside the job's
 * transaction (a failover, an administrator's `pg_terminate_backend`, a timeout): that delivery
 * fails and can be sent again; the app's process goes on (pg-pool listens for the errors of
 * idle connections only, so an unheard `error` on a checked-out one used to end the process).
 */
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { runOncePg } from '../../src/sdk/index.js';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from '../helpers/pg.js';

const schema = schemaName('runonce_session');
afterAll(() => dropSchema(schema));

it('a session ended inside the job fails that delivery, not the process; the retry runs once', async () => {
  await pgQuery(`CREATE SCHEMA ${schema}`);
  const url = new URL(withSchema(PG_URL, schema));
  url.searchParams.delete('schema');
  const pool = new pg.Pool({
    connectionString: url.toString(),
    options: `-c search_path=${schema}`,
  });
  const request = { headers: { 'x-cron-run-key': 'app/job#2026-01-01T00:00:00Z#ab' } };
  try {
    const first = runOncePg(pool, request, async (client) => {
      const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
      await pgQuery('SELECT pg_terminate_backend($1)', [rows[0]!['pid']]);
      await new Promise((r) => setTimeout(r, 300)); // the termination arrives between statements
      await client.query('SELECT 1');
      return 'first';
    });
    await expect(first).rejects.toThrow(/terminat|not queryable|Connection/i);
    const again = await runOncePg(pool, request, () => 'second');
    expect(again).toMatchObject({ status: 200 });
    expect(JSON.stringify(again)).toContain('second');
    expect(pool.listeners('error')).toHaveLength(0);
  } finally {
    await pool.end();
  }
});
