/**
 * The coordination seam's contract (test/daemon/coordination-contract.ts) on
 * both implementations: PostgreSQL (a schema per test, real waits for the
 * lease to expire) and the in-memory one the fast cluster tests use (a manual
 * clock). Plus what only PostgreSQL has: the ledger rows carry the epoch of the
 * term that wrote them, and old rows of the commands table keep their meaning.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { PostgresStore } from '../../src/daemon/store/postgres.js';
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { MemoryCoordination } from '../helpers/memory-coordination.js';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from '../helpers/pg.js';
import { coordinationContract } from './coordination-contract.js';
import { insertRuns, newRun } from './store-fixtures.js';

coordinationContract(
  'in memory (manual clock)',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-coord-'));
    const store = await openSqliteStore(join(dir, 'ledger.db'));
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const db = new MemoryCoordination(clock, store);
    return {
      a: db.connect(),
      b: db.connect(),
      store,
      advance: (ms) => clock.advance(ms),
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  3000,
);

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
});

/** Two replicas' stores (two pools) on one fresh schema. */
async function pgPair(): Promise<{ a: PostgresStore; b: PostgresStore; schema: string }> {
  const schema = schemaName('coord');
  schemas.push(schema);
  const a = PostgresStore.open(withSchema(PG_URL, schema));
  await a.migrate();
  return { a, b: PostgresStore.open(withSchema(PG_URL, schema)), schema };
}

coordinationContract(
  'postgres (schema per test)',
  async () => {
    const { a, b } = await pgPair();
    return {
      a: a.coordination(),
      b: b.coordination(),
      store: a,
      advance: (ms) => new Promise((r) => setTimeout(r, ms)),
      cleanup: async () => {
        await a.close();
        await b.close();
      },
    };
  },
  600,
);

it('postgres: every row of the ledger names the epoch of the term that last wrote it', async () => {
  const { a, b, schema } = await pgPair();
  const coordination = a.coordination();
  await coordination.acquireLease({ replica: 'a', incarnation: 'i1' }, 60_000);
  const [run] = await insertRuns(coordination.termStore({ holder: 'a', epoch: 1 }), [newRun()]);
  const [other] = await insertRuns(a, [newRun()]); // unfenced: no epoch
  const epochOf = async (id: string) =>
    (
      await pgQuery<{ e: string | null }>(
        `SELECT leader_epoch AS e FROM ${schema}.runs WHERE id = $1`,
        [id],
      )
    )[0]?.e;
  expect(await epochOf(run!.id)).toBe('1');
  expect(await epochOf(other!.id)).toBeNull();
  // the next term's write of the same row stamps it with its own epoch
  await coordination.releaseLease({ replica: 'a', incarnation: 'i1' }, 1);
  await coordination.acquireLease({ replica: 'b', incarnation: 'i2' }, 60_000);
  await coordination
    .termStore({ holder: 'b', epoch: 2 })
    .write([{ kind: 'end', id: run!.id, patch: { outcome: 'crashed', endedAt: 1, error: 'x' } }]);
  expect(await epochOf(run!.id)).toBe('2');
  await a.close();
  await b.close();
});

it('postgres: a command an older cronix completed (no state) reads as done', async () => {
  const { a, b, schema } = await pgPair();
  const id = await b.coordination().enqueueCommand('pause', {});
  await pgQuery(
    `UPDATE ${schema}.commands SET done_at = now(), result = '{"ok":1}' WHERE id = $1`,
    [id],
  );
  expect(await b.coordination().commandStatus(id)).toMatchObject({
    state: 'done',
    result: { ok: 1 },
  });
  expect(await b.coordination().withdrawCommand(id)).toBe(false);
  expect(await a.coordination().pendingCommands(10)).toEqual([]);
  await a.close();
  await b.close();
});
