/**
 * Run parameters (SPEC §16) over real HTTP on SQLite and PostgreSQL: a manual trigger of an HTTP
 * job with `manual.allow_body` sends its body (signed as sent) and records it with the run; a
 * command job gets the environment its `manual.env_allowlist` names; anything else is refused
 * with 400 naming what is wrong; the parameters are read back from the ledger, kept by a delayed
 * run and by a replay. The manifest rules: `allow_body` only for HTTP jobs, `env_allowlist` only
 * for command jobs and never a secret's name.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { startDaemon } from '../../src/http/serve.js';
import { until } from '../helpers/common.js';
import { dropSchema, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
const schema = schemaName('params');

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
  await dropSchema(schema);
});

describe.each(['sqlite', 'postgres'] as const)('on %s', (kind) => {
  it('a body for an HTTP job, env for a command job, within what the manifest allows; recorded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-params-'));
    const out = join(dir, 'out.txt');
    const auth = { secret_refs: ['env:P_SECRET'] };
    writeFileSync(
      join(dir, 'm.json'),
      JSON.stringify({
        version: 1,
        app: 'p',
        jobs: [
          {
            name: 'hb',
            schedule: '0 0 1 1 *',
            request: { url: `${sink.url}/hb`, body: '{"default":true}' },
            manual: { allow_body: true },
            auth,
          },
          { name: 'nb', schedule: '0 0 1 1 *', request: { url: `${sink.url}/nb` }, auth },
          {
            name: 'cmd',
            schedule: '0 0 1 1 *',
            command: {
              argv: ['sh', '-c', 'printf "%s/%s" "$TICKET" "$FIXED" > "$OUT"'],
              env: { OUT: out, FIXED: 'manifest' },
            },
            manual: { env_allowlist: ['TICKET'] },
          },
        ],
      }),
    );
    const daemon = await startDaemon({
      manifests: [join(dir, 'm.json')],
      dataDir: join(dir, 'data'),
      listen: '127.0.0.1:0',
      env: { P_SECRET: 'params-test-secret-0123456789' },
      ...(kind === 'postgres' ? { store: withSchema(PG_URL, schema) } : {}),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test JSON, read loosely
    const call = async (method: string, path: string, body?: unknown): Promise<[number, any]> => {
      const res = await fetch(`${daemon.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return [res.status, await res.json()];
    };
    const ended = (id: string) =>
      until(
        async () => {
          const [, r] = await call('GET', `/runs/${id}`);
          return r.phase === 'ended' ? r : undefined;
        },
        15_000,
        `run ${id} to end`,
      );
    try {
      const start = sink.requests.length;
      const [s1, t1] = await call('POST', '/jobs/p/hb/trigger', { body: '{"order":4711}' });
      expect(s1).toBe(202);
      expect(t1.run.params).toEqual({ body: '{"order":4711}' });
      const r1 = await ended(t1.run.id);
      expect(r1).toMatchObject({ outcome: 'success', params: { body: '{"order":4711}' } });
      const sent = sink.requests.slice(start).filter((r) => r.url === '/hb');
      expect(sent.map((r) => r.body.toString())).toEqual(['{"order":4711}']);

      // a replay sends what the run sent
      const [, rp] = await call('POST', `/runs/${t1.run.id}/replay`);
      expect(rp.run.params).toEqual({ body: '{"order":4711}' });
      await ended(rp.run.id);
      expect(
        sink.requests
          .slice(start)
          .filter((r) => r.url === '/hb')
          .map((r) => r.body.toString()),
      ).toEqual(['{"order":4711}', '{"order":4711}']);
      // a delayed run keeps its parameters in the ledger
      const [, dl] = await call('POST', '/jobs/p/hb/trigger', { body: 'later', after_seconds: 60 });
      expect(dl.admission).toBe('scheduled');
      expect((await daemon.store.getRun(dl.run.id))?.params).toEqual({ body: 'later' });

      const [s2, t2] = await call('POST', '/jobs/p/cmd/trigger', { env: { TICKET: 'OPS-1' } });
      expect(s2).toBe(202);
      const r2 = await ended(t2.run.id);
      expect(r2).toMatchObject({ outcome: 'success', params: { env: { TICKET: 'OPS-1' } } });
      expect(readFileSync(out, 'utf8')).toBe('OPS-1/manifest');
      // without parameters: the manifest's
      const [, t3] = await call('POST', '/jobs/p/cmd/trigger');
      expect((await ended(t3.run.id)).params).toBeNull();
      expect(readFileSync(out, 'utf8')).toBe('/manifest');

      // refused: what the job does not allow, and bad shapes
      // (a body over the API's request limit is 413 before it gets here)
      const refusals: [string, unknown, RegExp][] = [
        ['/jobs/p/nb/trigger', { body: 'x' }, /does not allow a body/],
        ['/jobs/p/cmd/trigger', { body: 'x' }, /command job: it takes no "body"/],
        ['/jobs/p/hb/trigger', { env: { TICKET: 'x' } }, /HTTP job: it takes no "env"/],
        [
          '/jobs/p/cmd/trigger',
          { env: { PATH: '/tmp' } },
          /"PATH" is not in p\/cmd's manual.env_allowlist \(TICKET\)/,
        ],
        ['/jobs/p/hb/trigger', { body: 42 }, /"body" must be a string/],
        ['/jobs/p/cmd/trigger', { env: { TICKET: 1 } }, /values must be strings/],
      ];
      for (const [path, body, message] of refusals) {
        const [status, err] = await call('POST', path, body);
        expect(status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(err.error.message).toMatch(message);
      }
    } finally {
      await daemon.stop(2000);
    }
  });
});

it('manifest rules: allow_body only for HTTP jobs, env_allowlist only for command jobs and not a secret', () => {
  const job = (extra: Record<string, unknown>) =>
    parseManifest({ version: 1, app: 'a', jobs: [{ name: 'j', schedule: '* * * * *', ...extra }] });
  const command = { argv: ['true'], env_from_secrets: { TOKEN: 'env:T' } };
  const bad1 = job({ command, manual: { allow_body: true } });
  expect(bad1.ok).toBe(false);
  expect(JSON.stringify(bad1)).toContain('allow_body is for HTTP jobs');
  const bad2 = job({ request: { url: 'https://x.example/' }, manual: { env_allowlist: ['A'] } });
  expect(JSON.stringify(bad2)).toContain('env_allowlist is for command jobs');
  const bad3 = job({ command, manual: { env_allowlist: ['TOKEN'] } });
  expect(JSON.stringify(bad3)).toContain('is set from a secret');
  const bad4 = job({ command, manual: { env_allowlist: ['1BAD'] } });
  expect(bad4.ok).toBe(false);
  const ok = job({ command, manual: { env_allowlist: ['B', 'A'] } });
  expect(ok.ok && ok.manifest.jobs[0]?.manual).toEqual({ env_allowlist: ['A', 'B'] });
});
