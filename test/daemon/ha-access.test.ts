/**
 * Access in high availability (SPEC §10, §18) on a real PostgreSQL with two replicas in this
 * process sharing one token file: a token created on one replica works on the other (the store
 * holds the tokens); a verb sent to the standby is handed to the leader, carried out, and its
 * audit row names the original caller — the token — with the standby as `replica` and
 * `forwarded: true`; a token revoked on one replica is refused by the other within the token
 * cache's second, and the event streams it opened on the other end within the streams'
 * re-check.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { STREAM_RECHECK_MS } from '../../src/http/stream-guard.js';
import { TOKEN_CACHE_MS } from '../../src/http/tokens.js';
import { until } from '../helpers/common.js';
import { dropSchema, PG_URL, schemaName, withSchema } from '../helpers/pg.js';
import { startSink, type Sink } from '../helpers/sink.js';

const schema = schemaName('haaccess');
const dir = mkdtempSync(join(tmpdir(), 'cronix-ha-access-'));
const FILE_TOKEN = 'ha-access-shared-token-0123456789';
let sink: Sink;
const replicas: Record<string, DaemonHandle> = {};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = { status: number; json: any };

async function api(
  d: DaemonHandle,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await res.json() };
}

function start(replica: string): Promise<DaemonHandle> {
  return startDaemon({
    manifests: [join(dir, 'm.json')],
    dataDir: join(dir, replica),
    tokenFile: join(dir, 'token'),
    listen: '127.0.0.1:0',
    env: { S: 'ha-access-secret-0123456789' },
    store: withSchema(PG_URL, schema),
    replicaId: replica,
    leaseSeconds: 3,
  });
}

const roleOf = async (d: DaemonHandle): Promise<string> =>
  (await api(d, FILE_TOKEN, 'GET', '/api/v1/cluster')).json.self.role as string;

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
  writeFileSync(join(dir, 'token'), `${FILE_TOKEN}\n`, { mode: 0o600 });
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({
      version: 1,
      app: 'ha',
      jobs: [
        {
          name: 'job',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/job` },
          auth: { secret_refs: ['env:S'] },
        },
      ],
    }),
  );
  replicas['a'] = await start('a');
  await until(async () => ((await roleOf(replicas['a']!)) === 'leader' ? true : undefined), 20_000);
  replicas['b'] = await start('b');
});
afterAll(async () => {
  for (const d of Object.values(replicas)) await d.stop(1000);
  await sink.close();
  await dropSchema(schema);
});

it('a verb sent to the standby is carried out by the leader and audited with the original caller', async () => {
  const leader = replicas['a']!;
  const standby = replicas['b']!;
  expect(await roleOf(standby)).toBe('standby');
  // created on the leader, used on the standby: one store
  const created = await api(leader, FILE_TOKEN, 'POST', '/api/v1/tokens', {
    name: 'deployer',
    role: 'operator',
    apps: ['ha'],
  });
  expect(created.status).toBe(201);
  const token = created.json.token as string;
  const t = await api(standby, token, 'POST', '/api/v1/jobs/ha/job/trigger');
  expect(t.status, JSON.stringify(t.json)).toBe(202);
  const runId = t.json.run.id as string;
  await until(
    () => (sink.requests.some((r) => r.url.startsWith('/job')) ? true : undefined),
    15_000,
  );
  const rows = (await api(leader, FILE_TOKEN, 'GET', '/api/v1/audit?action=trigger')).json.audit;
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    who: 'deployer',
    who_kind: 'token',
    role: 'operator',
    action: 'trigger',
    app: 'ha',
    job: 'job',
    run: runId,
    from: 'api',
    replica: 'b',
    forwarded: true,
    result: 'ok',
    status: 202,
  });
  // the leader's own verbs are not forwarded
  await api(leader, token, 'POST', '/api/v1/jobs/ha/job/pause');
  const pause = (await api(standby, FILE_TOKEN, 'GET', '/api/v1/audit?action=pause')).json.audit;
  expect(pause[0]).toMatchObject({ who: 'deployer', replica: 'a', forwarded: false });
});

it('a token revoked on one replica is refused by the other within the cache second', async () => {
  const [a, b] = [replicas['a']!, replicas['b']!];
  const token = (
    await api(a, FILE_TOKEN, 'POST', '/api/v1/tokens', { name: 'short', role: 'viewer' })
  ).json.token as string;
  expect((await api(b, token, 'GET', '/api/v1/jobs')).status).toBe(200);
  expect((await api(b, FILE_TOKEN, 'DELETE', '/api/v1/tokens/short')).status).toBe(200);
  expect((await api(b, token, 'GET', '/api/v1/jobs')).status).toBe(401); // at once where revoked
  const revokedAt = Date.now();
  await until(
    async () => ((await api(a, token, 'GET', '/api/v1/jobs')).status === 401 ? true : undefined),
    10_000,
  );
  expect(Date.now() - revokedAt).toBeLessThan(TOKEN_CACHE_MS + 1500);
});

it('an event stream open on one replica ends once its token is revoked on the other', async () => {
  const [a, b] = [replicas['a']!, replicas['b']!];
  const token = (
    await api(a, FILE_TOKEN, 'POST', '/api/v1/tokens', { name: 'watcher', role: 'viewer' })
  ).json.token as string;
  const res = await fetch(`${b.url}/api/v1/events`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  let text = '';
  let endedAt: number | null = null;
  void (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    endedAt = Date.now();
  })();
  await until(() => (text.includes('event: ready') ? true : undefined), 10_000);
  // revoked on a: b hears of it only through the store (no hook crosses replicas)
  expect((await api(a, FILE_TOKEN, 'DELETE', '/api/v1/tokens/watcher')).status).toBe(200);
  const revokedAt = Date.now();
  const ended = await until(() => endedAt ?? undefined, 20_000, 'the stream on b to end');
  expect(ended - revokedAt).toBeLessThan(STREAM_RECHECK_MS + TOKEN_CACHE_MS + 2_000);
  const again = await fetch(`${b.url}/api/v1/events`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(again.status).toBe(401);
  await again.body?.cancel();
});
