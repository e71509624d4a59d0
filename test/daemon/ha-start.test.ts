/**
 * Bad situations at the start of a replica (SPEC §10, issue 11), with real
 * `cronix serve` processes: an unreachable PostgreSQL is named (host and
 * cause) and retried with backoff, without a stack trace; a schema written by
 * a newer cronix, a user without privileges and a malformed URL stop start-up
 * with exit 1 and one message naming the cause.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PG_MIGRATIONS } from '../../src/daemon/store/pg/migrate.js';
import { PostgresStore } from '../../src/daemon/store/postgres.js';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from '../helpers/pg.js';
import { exitWithin, manifestDir, spawnServe, until } from '../helpers/serve.js';

const role = `cronix_limited_${Date.now().toString(36)}`;
const schemas: string[] = [];
let dir: string;
beforeAll(async () => {
  dir = manifestDir('start', [
    { name: 'a', schedule: '0 0 1 1 *', request: { url: 'http://127.0.0.1:9/a' } },
  ]);
  await pgQuery(`CREATE ROLE ${role} LOGIN`);
});
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
  await pgQuery(`DROP ROLE IF EXISTS ${role}`);
});

async function serveWith(store: string) {
  return spawnServe(dir, 0, { args: ['--store', store], waitListening: false });
}

it('an unreachable server: named with host and cause, retried with backoff, no stack trace', async () => {
  const s = await serveWith('postgres://postgres@127.0.0.1:1/postgres?schema=nowhere');
  await until(() => (/retrying in 2 s/.test(s.output()) ? true : undefined), 15_000);
  expect(s.output()).toContain(
    'PostgreSQL at 127.0.0.1:1/postgres: connection refused (is the server running and listening there?); retrying in 1 s',
  );
  expect(s.output()).not.toMatch(/\n\s+at /); // no stack trace
  expect(await exitWithin(s, 100)).toBe('running');
  s.child.kill('SIGKILL');
}, 30_000);

it('a schema from a newer cronix is refused, naming both versions', async () => {
  const schema = schemaName('newer');
  schemas.push(schema);
  const store = PostgresStore.open(withSchema(PG_URL, schema));
  await store.migrate();
  await store.close();
  await pgQuery(`INSERT INTO ${schema}.schema_migrations VALUES (42, 'future', 0)`);
  const s = await serveWith(withSchema(PG_URL, schema));
  expect(await exitWithin(s, 15_000)).toEqual({ code: 1, signal: null });
  expect(s.output()).toContain(
    `ledger schema version 42 is newer than this cronix knows (${Math.max(...PG_MIGRATIONS.map((m) => m.version))})`,
  );
});

it('a user without the privilege: the statement and the privilege are named', async () => {
  const schema = schemaName('denied');
  const s = await serveWith(`postgres://${role}@127.0.0.1:5432/postgres?schema=${schema}`);
  expect(await exitWithin(s, 15_000)).toEqual({ code: 1, signal: null });
  expect(s.output()).toMatch(
    /permission denied \(permission denied for database postgres\): CREATE SCHEMA/,
  );
  expect(s.output()).toContain('grant the user USAGE and CREATE on the schema');
});

it('a malformed store URL or schema name stops start-up with the reason', async () => {
  const bad = await serveWith('mysql://x@y/z');
  expect(await exitWithin(bad, 15_000)).toEqual({ code: 1, signal: null });
  expect(bad.output()).toContain('--store: the URL must start with postgres://');
  const reserved = await serveWith(withSchema(PG_URL, 'pg_catalog'));
  expect(await exitWithin(reserved, 15_000)).toEqual({ code: 1, signal: null });
  expect(reserved.output()).toContain('not starting with pg_');
});
