/**
 * Crash test with real processes (issue 9): a real `cronix serve` is SIGKILLed
 * at random points, at least 50 times, while immediate and delayed triggers
 * that share instants (and so run keys) pour in; a real HTTP sink records
 * every request. Afterwards, with one last daemon drained:
 *
 * - every trigger the API accepted (202) has exactly one row, and it ended;
 * - no run key was delivered after its recorded success, at most one run per
 *   key succeeded, and two runs of one key were never in flight together;
 * - `PRAGMA integrity_check` is ok.
 *
 * The seed is printed; `CRONIX_CRASH_SEED` and `CRONIX_CRASH_KILLS` replay or
 * lengthen a run.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, manifestDir, spawnServe, until, type Served } from '../helpers/serve.js';
import { startSink, type Sink } from '../helpers/sink.js';

const KILLS = Number(process.env['CRONIX_CRASH_KILLS'] ?? 50);
const SEED = Number(process.env['CRONIX_CRASH_SEED'] ?? Date.now() % 1_000_000);

/** A small deterministic PRNG (mulberry32), so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let sink: Sink;
beforeAll(async () => {
  const random = rng(SEED + 1);
  sink = await startSink(() =>
    random() < 0.1 ? { status: 503 } : { status: 200, delayMs: Math.floor(random() * 40) },
  );
});
afterAll(async () => {
  await sink.close();
});

const JOBS = ['enq', 'forbid', 'allow'];

it(`SIGKILL at random points (${KILLS} kills): one row per accepted trigger, no key after its success`, async () => {
  console.log(`crash test seed ${SEED}`);
  const random = rng(SEED);
  const policy = {
    retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 },
    timeout_seconds: 10,
  };
  const dir = manifestDir(
    'crash',
    JOBS.map((name) => ({
      name,
      schedule: '0 0 1 1 *',
      request: { url: `${sink.url}/${name}` },
      policy: {
        ...policy,
        ...(name === 'enq' ? { concurrency: 'Enqueue', max_concurrent: 2, queue_max: 1000 } : {}),
        ...(name === 'allow' ? { concurrency: 'Allow' } : {}),
      },
    })),
  );
  const accepted = new Set<string>();
  let daemon: Served | undefined;
  for (let kill = 0; kill < KILLS; kill++) {
    daemon = await spawnServe(dir);
    const s = daemon;
    // a few shared instants just ahead: delayed triggers for them share run keys
    const base = Math.ceil((Date.now() + 300) / 250) * 250;
    const instants = [base, base + 250, base + 500].map((t) => new Date(t).toISOString());
    const burst = Array.from({ length: 8 + Math.floor(random() * 8) }, () => {
      const job = JOBS[Math.floor(random() * JOBS.length)]!;
      const body = random() < 0.5 ? {} : { at: instants[Math.floor(random() * instants.length)]! };
      return api(s, 'POST', `/api/v1/jobs/crash/${job}/trigger`, body)
        .then((r) => {
          if (r.status === 202) accepted.add((r.json['run'] as { id: string }).id);
        })
        .catch(() => undefined); // the daemon died under this request: not accepted
    });
    await new Promise((r) => setTimeout(r, Math.floor(random() * 700)));
    s.child.kill('SIGKILL');
    await s.exited;
    await Promise.all(burst);
  }
  // one last daemon runs everything left (crashed runs end crashed; delayed ones come due)
  daemon = await spawnServe(dir);
  const last = daemon;
  await until(
    async () => {
      const queued = (await api(last, 'GET', '/api/v1/runs?phase=queued&limit=1'))['json'];
      const running = (await api(last, 'GET', '/api/v1/runs?phase=running&limit=1'))['json'];
      return (queued['runs'] as unknown[]).length + (running['runs'] as unknown[]).length === 0
        ? true
        : undefined;
    },
    30_000,
    'the ledger to drain',
  );
  last.child.kill('SIGTERM');
  expect((await last.exited).code).toBe(0);

  const db = new Database(join(dir, 'data', 'ledger.sqlite'), { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const rows = db
      .prepare('SELECT id, run_key AS runKey, phase, outcome, ended_at AS endedAt FROM runs')
      .all() as { id: string; runKey: string; phase: string; outcome: string; endedAt: number }[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(accepted.size).toBeGreaterThan(KILLS); // the test did something
    for (const id of accepted) expect(byId.get(id)?.phase, `accepted run ${id}`).toBe('ended');
    expect(rows.every((r) => r.phase === 'ended')).toBe(true);
    // at most one success per key, and nothing sent for a key after its recorded success
    const successAt = new Map<string, number>();
    for (const r of rows.filter((r) => r.outcome === 'success')) {
      expect(successAt.has(r.runKey), `two successes of ${r.runKey}`).toBe(false);
      successAt.set(r.runKey, r.endedAt);
    }
    const sent = sink.requests.filter((r) => r.url.startsWith('/'));
    for (const r of sent) {
      const key = r.headers['x-cron-run-key'] as string;
      const done = successAt.get(key);
      if (done !== undefined)
        expect(r.receivedAt, `${key} sent after its success`).toBeLessThanOrEqual(done);
    }
    // two runs of one key never in flight together
    const flights = sent.map((r) => ({
      key: r.headers['x-cron-run-key'] as string,
      run: r.headers['x-cron-run-id'] as string,
      from: r.receivedAtPerf,
      to: r.handlerEndPerf ?? r.closedAtPerf ?? Infinity,
    }));
    for (const a of flights)
      for (const b of flights)
        if (a.key === b.key && a.run !== b.run)
          expect(a.to <= b.from || b.to <= a.from, `${a.key} overlapped`).toBe(true);
    console.log(
      `crash test: ${KILLS} kills, ${accepted.size} accepted triggers, ${rows.length} rows, ` +
        `${sent.length} requests, outcomes ${JSON.stringify(countBy(rows.map((r) => r.outcome)))}`,
    );
  } finally {
    db.close();
  }
}, 600_000);

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
