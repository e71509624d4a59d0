/**
 * `Idempotency-Key` on `POST …/trigger` (SPEC §16), over real HTTP on SQLite and PostgreSQL:
 * 100 concurrent identical requests with one key make one run and all answer with it (the same
 * admission too), a retry after the run ended still returns it, another key or another job makes
 * its own run, the key survives a restart of the daemon (it is in the ledger), a bad key is 400
 * naming the header.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { until } from '../helpers/common.js';
import { dropSchema, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
const schema = schemaName('idem');

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200, delayMs: 300 }));
});
afterAll(async () => {
  await sink.close();
  await dropSchema(schema);
});

function manifestFile(dir: string): string {
  const file = join(dir, 'manifest.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      app: 'idem',
      jobs: ['a', 'b'].map((name) => ({
        name,
        schedule: '0 0 1 1 *',
        request: { url: `${sink.url}/${name}` },
        policy: { concurrency: 'Allow' },
        auth: { secret_refs: ['env:IDEM_SECRET'] },
      })),
    }),
  );
  return file;
}

describe.each(['sqlite', 'postgres'] as const)('on %s', (kind) => {
  it('100 concurrent identical requests with one key make one run; retries, restarts and other keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-idem-'));
    const opts = {
      manifests: [manifestFile(dir)],
      dataDir: join(dir, 'data'),
      listen: '127.0.0.1:0',
      env: { IDEM_SECRET: 'idem-test-secret-0123456789' },
      ...(kind === 'postgres' ? { store: withSchema(PG_URL, schema) } : {}),
    };
    let daemon: DaemonHandle = await startDaemon(opts);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON, read loosely
    const trigger = async (job: string, key?: string): Promise<[number, any]> => {
      const res = await fetch(`${daemon.url}/api/v1/jobs/idem/${job}/trigger`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${daemon.token}`,
          ...(key !== undefined ? { 'idempotency-key': key } : {}),
        },
      });
      return [res.status, await res.json()];
    };
    const start = sink.requests.length;
    try {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => trigger('a', `order-${kind}-1`)),
      );
      const ids = new Set(answers.map(([, j]) => j.run.id));
      expect(ids.size).toBe(1);
      for (const [status, j] of answers) {
        expect(status).toBe(202);
        expect(j.admission).toBe('started');
      }
      const [id] = [...ids];
      await until(() => (sink.requests.length > start ? true : undefined), 10_000, 'the run');
      // a retry after it ended still answers with it
      await until(
        async () => {
          const [, j] = await trigger('a', `order-${kind}-1`);
          return j.run.id === id && j.run.phase === 'ended' ? true : undefined;
        },
        10_000,
        'the first run, ended',
      );
      // another key, and the same key on another job, are runs of their own
      const [, other] = await trigger('a', `order-${kind}-2`);
      const [, onB] = await trigger('b', `order-${kind}-1`);
      expect(new Set([id, other.run.id, onB.run.id]).size).toBe(3);
      // the key is in the ledger: a restarted daemon still answers with the first run
      await daemon.stop(2000);
      daemon = await startDaemon(opts);
      const [, again] = await trigger('a', `order-${kind}-1`);
      expect(again.run.id).toBe(id);
      // a bad key: 400 naming the header
      const [bad, err] = await trigger('a', 'has space');
      expect(bad).toBe(400);
      expect(err.error.path).toBe('Idempotency-Key');
      const runs = await daemon.store.listRuns({ app: 'idem', job: 'a', limit: 1000 });
      expect(runs).toHaveLength(2);
      await until(() => (sink.requests.length - start >= 3 ? true : undefined), 10_000, 'runs');
      expect(sink.requests.slice(start).filter((r) => r.url === '/a')).toHaveLength(2);
    } finally {
      await daemon.stop(2000);
    }
  });
});
