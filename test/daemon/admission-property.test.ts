/**
 * Randomized property test of admission (issue 9): random interleavings of
 * scheduled fires, catch-up after a clock jump or a restart, manual and
 * delayed triggers (sharing instants on purpose), Replace, replay, cancel,
 * reload and request completions, on a fake clock with the real scheduler and
 * a real SQLite ledger. The transport is an in-memory one the test completes
 * request by request, so every interleaving is reachable and reproducible
 * (fast-check prints the seed of a failure).
 *
 * Checked at every request sent: no job has more than max_concurrent requests
 * in flight (Allow excepted), no run key is sent after a 2xx for it, and two
 * runs of one key are never in flight together. Checked after every step: the
 * scheduler's active count ≤ max_concurrent, queued runs of an Enqueue job
 * start in the order they were queued. Checked at the end, once everything is
 * drained: nothing is left queued or running in the ledger or in memory, and
 * `PRAGMA integrity_check` is ok.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { Manifest } from '../../src/contract/manifest/types.js';
import { Scheduler } from '../../src/daemon/scheduler.js';
import { openSqliteStore, type SqliteStore } from '../../src/daemon/store/sqlite.js';
import type { RunRecord } from '../../src/daemon/store/types.js';
import type {
  SendOptions,
  Transport,
  TransportRequest,
  TransportResult,
} from '../../src/fire/types.js';
import { manifest } from '../helpers/daemon.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 10);

/** The jobs under test: every policy, one with two schedules firing in the same minute. */
const JOBS: Record<string, { policy: Record<string, unknown>; schedules: string[] }> = {
  forbid: { policy: { concurrency: 'Forbid' }, schedules: ['* * * * *'] },
  forbid2: { policy: { concurrency: 'Forbid', max_concurrent: 2 }, schedules: ['*/2 * * * *'] },
  replace: { policy: { concurrency: 'Replace' }, schedules: ['* * * * *', '*/2 * * * *'] },
  enqueue: {
    policy: {
      concurrency: 'Enqueue',
      max_concurrent: 2,
      queue_max: 4,
      catchup: { mode: 'all', max_runs: 3 },
    },
    schedules: ['* * * * *'],
  },
  allow: { policy: { concurrency: 'Allow' }, schedules: ['*/3 * * * *'] },
};
const NAMES = Object.keys(JOBS);
const LIMIT: Record<string, number> = {
  forbid: 1,
  forbid2: 2,
  replace: 1,
  enqueue: 2,
  allow: Infinity,
};

function manifestWith(names: readonly string[]): Manifest {
  return manifest(
    'prop',
    names.map((name) => ({
      name,
      schedules: JOBS[name]!.schedules,
      request: { url: `http://cronix.test/${name}` },
      policy: {
        retries: { max_attempts: 2, min_seconds: 0, max_seconds: 1 },
        timeout_seconds: 600,
        ...JOBS[name]!.policy,
      },
    })),
  );
}

/** One request in flight, completed by the test. */
interface Flight {
  job: string;
  runId: string;
  runKey: string;
  finish(result: TransportResult): void;
}

/** A transport whose requests stay in flight until the test finishes them; checks invariants at each send. */
class HeldTransport implements Transport {
  readonly flights: Flight[] = [];
  readonly violations: string[] = [];
  readonly okKeys = new Set<string>();
  /** Run ids in the order their first attempt was sent. */
  readonly firstSent: string[] = [];

  send(request: TransportRequest, options: SendOptions): Promise<TransportResult> {
    const job = new URL(request.url).pathname.slice(1);
    const runId = request.headers['X-Cron-Run-Id'] as string;
    const runKey = request.headers['X-Cron-Run-Key'] as string;
    const inFlight = this.flights.filter((f) => f.job === job);
    if (inFlight.length + 1 > (LIMIT[job] ?? Infinity))
      this.violations.push(`${job}: ${inFlight.length + 1} requests in flight`);
    if (this.okKeys.has(runKey)) this.violations.push(`${runKey} sent after its success`);
    if (this.flights.some((f) => f.runKey === runKey && f.runId !== runId))
      this.violations.push(`${runKey} in flight for two runs`);
    if (!this.firstSent.includes(runId)) this.firstSent.push(runId);
    return new Promise((resolve) => {
      const flight: Flight = {
        job,
        runId,
        runKey,
        finish: (result) => {
          const i = this.flights.indexOf(flight);
          if (i < 0) return;
          this.flights.splice(i, 1);
          if (result.kind === 'response' && result.status < 300) this.okKeys.add(runKey);
          resolve(result);
        },
      };
      this.flights.push(flight);
      options.signal?.addEventListener('abort', () => flight.finish({ kind: 'aborted' }), {
        once: true,
      });
    });
  }
}

type Step =
  | { kind: 'advance'; ms: number }
  | { kind: 'jump'; minutes: number }
  | { kind: 'trigger'; job: string }
  | { kind: 'delayed'; job: string; seconds: number }
  | { kind: 'finish'; pick: number; status: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'replay'; pick: number }
  | { kind: 'reload'; drop: string | null }
  | { kind: 'restart' };

const job = fc.constantFrom(...NAMES);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.constantFrom(1, 500, 20_000, 60_000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('jump' as const),
      minutes: fc.integer({ min: 2, max: 30 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('trigger' as const), job }) },
  // few distinct delays, so delayed triggers share instants
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('delayed' as const),
      job,
      seconds: fc.constantFrom(30, 60, 90),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('finish' as const),
      pick: fc.nat(),
      status: fc.constantFrom(200, 200, 503, 422),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('replay' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('reload' as const), drop: fc.option(job) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const) }) },
);

async function quiesce(scheduler: Scheduler): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await settle(5);
    await scheduler.ledger.idle();
  }
}

async function runScenario(steps: Step[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-prop-'));
  const store: SqliteStore = await openSqliteStore(join(dir, 'ledger.sqlite'));
  const clock = new ManualClock(T0);
  const transport = new HeldTransport();
  const queuedOrder: string[] = [];
  let current = [...NAMES];
  const make = async (): Promise<Scheduler> => {
    const s = new Scheduler({
      store,
      clock,
      transport,
      secretsFor: () => ['prop-secret-0123456789'],
      random: () => 0,
    });
    s.events.on('run-recorded', (r: RunRecord) => {
      if (r.job === 'enqueue' && r.phase === 'queued' && r.dueAt === null) queuedOrder.push(r.id);
    });
    await s.start([manifestWith(current)]);
    return s;
  };
  let scheduler = await make();
  const known: string[] = [];
  const check = (): void => {
    expect(transport.violations).toEqual([]);
    for (const name of NAMES) {
      const active = scheduler.activeCount(`prop/${name}`);
      if (LIMIT[name] !== Infinity) expect(active, name).toBeLessThanOrEqual(LIMIT[name]!);
    }
    // FIFO: queued Enqueue runs were first sent in the order they were queued
    const sentQueued = transport.firstSent.filter((id) => queuedOrder.includes(id));
    const expected = queuedOrder.filter((id) => sentQueued.includes(id));
    expect(sentQueued).toEqual(expected);
  };
  try {
    for (const s of steps) {
      switch (s.kind) {
        case 'advance':
          await clock.advance(s.ms);
          break;
        case 'jump':
          clock.t += s.minutes * 60_000;
          await clock.advance(1);
          break;
        case 'trigger':
          if (current.includes(s.job)) known.push((await scheduler.trigger('prop', s.job)).run.id);
          clock.t += 1;
          break;
        case 'delayed':
          if (current.includes(s.job))
            known.push(
              (await scheduler.trigger('prop', s.job, { afterSeconds: s.seconds })).run.id,
            );
          break;
        case 'finish': {
          const f = transport.flights[s.pick % Math.max(1, transport.flights.length)];
          f?.finish({ kind: 'response', status: s.status, bodyExcerpt: '' });
          break;
        }
        case 'cancel': {
          const id = known[s.pick % Math.max(1, known.length)];
          if (id) await scheduler.cancel(id).catch(() => undefined);
          break;
        }
        case 'replay': {
          const ended = await store.listRuns({ app: 'prop', phase: 'ended', limit: 50 });
          const r = ended[s.pick % Math.max(1, ended.length)];
          if (r && current.includes(r.job)) known.push((await scheduler.replay(r.id)).run.id);
          break;
        }
        case 'reload':
          current = NAMES.filter((n) => n !== s.drop);
          await scheduler.reload([manifestWith(current)]);
          break;
        case 'restart':
          await scheduler.stop(0);
          scheduler = await make();
          break;
      }
      await quiesce(scheduler);
      check();
    }
    // drain: finish every request, let every delayed run come due, until quiet
    for (let round = 0; round < 200; round++) {
      for (const f of [...transport.flights])
        f.finish({ kind: 'response', status: 200, bodyExcerpt: '' });
      await clock.advance(1000);
      await quiesce(scheduler);
      check();
      const open = [...(await store.queuedRuns()), ...(await store.runningRuns())];
      if (open.length === 0 && transport.flights.length === 0) break;
      if (round === 199)
        throw new Error(`not drained: ${open.map((r) => `${r.job}:${r.phase}`).join(' ')}`);
    }
    for (const name of NAMES) {
      expect(scheduler.activeCount(`prop/${name}`)).toBe(0);
      expect(scheduler.queueLength(`prop/${name}`)).toBe(0);
    }
    expect(store.integrityCheck()).toEqual(['ok']);
  } finally {
    await scheduler.stop(0);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

it('admission keeps its invariants under random interleavings', async () => {
  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 70 }), runScenario), {
    numRuns: Number(process.env['CRONIX_PROP_RUNS'] ?? 40),
    endOnFailure: true,
  });
}, 240_000);
