/**
 * Live views on a standby replica (SPEC §10 "API on any replica", §13 "Live"): two replicas in
 * this process on a real PostgreSQL. The leader announces the runs it records, starts and ends
 * the notifications it records and delivers and the jobs it pauses; the standby's
 * `GET /api/v1/events` carries them, read back from the store. A burst (more runs than one announcement lists) reaches the standby as `reset`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LIVE_MAX_RUNS } from '../../src/daemon/cluster/live.js';
import type { DaemonHandle } from '../../src/http/serve.js';
import { roleOf, startReplica } from '../helpers/ha.js';
import { dropSchema, schemaName } from '../helpers/pg.js';
import { until } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { sseReader, type SseEvent } from '../helpers/sse.js';

const schemas: string[] = [];
const handles: DaemonHandle[] = [];
const sinks: Sink[] = [];
afterAll(async () => {
  for (const h of handles.reverse()) await h.stop(500).catch(() => undefined);
  for (const s of sinks) await s.close();
  for (const s of schemas) await dropSchema(s);
});

/** A leader and a standby sharing a fresh schema, with `jobs` in app `live`. */
async function pair(
  jobs: (sinkUrl: string) => Record<string, unknown>[],
  extra: (sinkUrl: string) => Record<string, unknown> = () => ({}),
) {
  // `/bad…` is rejected (422): a failed run
  const sink = await startSink((_, r) => ({ status: r.url.startsWith('/bad') ? 422 : 200 }));
  sinks.push(sink);
  const schema = schemaName('live');
  schemas.push(schema);
  const dir = mkdtempSync(join(tmpdir(), 'cronix-ha-live-'));
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({ version: 1, app: 'live', ...extra(sink.url), jobs: jobs(sink.url) }),
  );
  const start = async (replica: string) => {
    const d = await startReplica(dir, schema, replica, { S: 'ha-live-secret-0123456789' });
    handles.push(d);
    return d;
  };
  const leader = await start('a');
  await until(async () => ((await roleOf(leader)) === 'leader' ? true : undefined));
  const standby = await start('b');
  expect(await roleOf(standby)).toBe('standby');
  return { leader, standby, sink };
}

const auth = { auth: { secret_refs: ['env:S'] } };
const runsOf = (events: SseEvent[], id: string) =>
  events
    .filter((e) => e.event === 'run')
    .map((e) => JSON.parse(e.data) as { change: string; run: { id: string; outcome: string } })
    .filter((e) => e.run.id === id);

describe('a standby’s event stream', () => {
  it('carries the leader’s run changes and pauses, read back from the store', async () => {
    const { leader, standby } = await pair((url) => [
      { name: 'job', schedule: '0 0 1 1 *', request: { url: `${url}/job` }, ...auth },
    ]);
    const stream = sseReader(await fetch(`${standby.url}/api/v1/events`));
    await stream.until((es) => es.some((e) => e.event === 'ready'));

    // a run triggered on the leader ends; the standby's stream shows it with its outcome
    const res = await fetch(`${leader.url}/api/v1/jobs/live/job/trigger`, { method: 'POST' });
    expect(res.status).toBe(202);
    const { run } = (await res.json()) as { run: { id: string } };
    const got = await stream.until((es) => runsOf(es, run.id).some((e) => e.change === 'ended'));
    const ended = runsOf(got, run.id).find((e) => e.change === 'ended');
    expect(ended?.run).toMatchObject({ id: run.id, outcome: 'success' });
    // the same record the standby's API reads
    const api = (await (await fetch(`${standby.url}/api/v1/runs/${run.id}`)).json()) as {
      outcome: string;
    };
    expect(api.outcome).toBe('success');

    // a pause asked of the standby is carried out by the leader and comes back as a job event
    expect(
      (await fetch(`${standby.url}/api/v1/jobs/live/job/pause`, { method: 'POST' })).status,
    ).toBeLessThan(300);
    const paused = await stream.until((es) => es.some((e) => e.event === 'job'));
    expect(paused.filter((e) => e.event === 'job').map((e) => JSON.parse(e.data))).toEqual([
      { app: 'live', job: 'job', paused: true },
    ]);
    // no reset: every change was listed
    expect(stream.events.some((e) => e.event === 'reset')).toBe(false);
    await stream.close();
  }, 30_000);

  it('carries the notifications the leader records and delivers', async () => {
    const { leader, standby } = await pair(
      (url) => [
        {
          name: 'bad',
          schedule: '0 0 1 1 *',
          request: { url: `${url}/bad` },
          notify: [{ to: 'hook', on: ['failed'] }],
          ...auth,
        },
      ],
      (url) => ({ notifiers: { hook: { type: 'webhook', url: `${url}/hook` } } }),
    );
    const stream = sseReader(await fetch(`${standby.url}/api/v1/events`));
    await stream.until((es) => es.some((e) => e.event === 'ready'));
    const res = await fetch(`${leader.url}/api/v1/jobs/live/bad/trigger`, { method: 'POST' });
    const { run } = (await res.json()) as { run: { id: string } };
    const notes = (es: SseEvent[]) =>
      es
        .filter((e) => e.event === 'notification')
        .map((e) => JSON.parse(e.data) as { notification: Record<string, unknown> })
        .map((e) => e.notification);
    const got = await stream.until((es) => notes(es).some((n) => n['status'] === 'delivered'));
    const delivered = notes(got).find((n) => n['status'] === 'delivered');
    expect(delivered).toMatchObject({ event: 'failed', job: 'bad', notifier: 'hook' });
    expect(JSON.stringify(delivered)).toContain(run.id);
    await stream.close();
  }, 30_000);

  it(`a burst of more than ${LIVE_MAX_RUNS} runs reaches it as reset, not lost`, async () => {
    const n = LIVE_MAX_RUNS + 50;
    const { standby } = await pair((url) =>
      Array.from({ length: n }, (_, i) => ({
        name: `b${i}`,
        schedule: '*/2 * * * * *',
        request: { url: `${url}/b${i}` },
        policy: { concurrency: 'Allow' },
        ...auth,
      })),
    );
    const stream = sseReader(await fetch(`${standby.url}/api/v1/events`));
    await stream.until((es) => es.some((e) => e.event === 'ready'));
    const got = await stream.until((es) => es.some((e) => e.event === 'reset'), 15_000);
    expect(got.some((e) => e.event === 'reset')).toBe(true);
    // and the standby's API has the runs of the burst
    const runs = (await (await fetch(`${standby.url}/api/v1/runs?limit=1000`)).json()) as {
      runs: unknown[];
    };
    expect(runs.runs.length).toBeGreaterThanOrEqual(n);
    await stream.close();
  }, 40_000);
});
