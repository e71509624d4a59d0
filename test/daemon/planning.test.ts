/**
 * Planning ahead (issue 12): a fire of an idle job is admitted and its row
 * recorded `planned` (claims taken) before its instant, and its request
 * leaves at the instant — never before; the row says `running` only once its
 * request has left. A planned run the daemon could not
 * launch is taken back (shutdown, or a restart before its instant), so its fire
 * is decided again; a restart after its instant ends it `crashed` like any
 * run that might have been sent. On a SQLite and a PostgreSQL ledger.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  dropLedgers,
  freshLedger,
  LEDGERS,
  manifest,
  openLedger,
  startTestDaemon,
  type TestDaemon,
} from '../helpers/daemon.js';
import { until } from '../helpers/common.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { startSink, type Sink } from '../helpers/sink.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 30);
const MINUTE_1 = Date.UTC(2026, 0, 1, 0, 1);
let sink: Sink;
let daemon: TestDaemon | undefined;
beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  mark = sink.requests.length;
});

const jobs = [
  {
    name: 'tick',
    schedule: '* * * * *',
    request: { url: 'http://127.0.0.1:1/placeholder' },
    policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
  },
];
const withSink = () => [
  manifest(
    'plan',
    jobs.map((j) => ({ ...j, request: { url: `${sink.url}/tick` } })),
  ),
];
let mark = 0;
/** Waits for `n` planned (or running) rows: a PostgreSQL ledger plans over the network. */
const plannedRows = (d: TestDaemon, n: number) =>
  until(
    async () => ((await d.store.runningRuns()).length >= n ? true : undefined),
    20_000,
    `${n} planned row(s)`,
  );
const sentFor = (at: number) =>
  sink.requests
    .slice(mark)
    .filter((r) => r.url === '/tick' && Number(r.headers['x-cron-fire-time']) * 1000 === at);

describe.each(LEDGERS)('on a %s ledger', (kind) => {
  afterAll(dropLedgers);

  it('the row is recorded before the instant; the request leaves at the instant, not before', async () => {
    const clock = new ManualClock(T0);
    daemon = await startTestDaemon(clock, withSink(), freshLedger(kind));
    await clock.advance(29_000); // 00:00:59: within the look-ahead
    await plannedRows(daemon, 1);
    const [row] = await daemon.store.runningRuns();
    expect(row).toMatchObject({ scheduledTime: MINUTE_1, startedAt: MINUTE_1, phase: 'planned' });
    expect(await daemon.store.listRuns({ phase: 'running' })).toEqual([]);
    expect(await daemon.store.keyHolder(row!.runKey)).toEqual({ runId: row!.id, state: 'running' });
    await clock.advance(999); // 00:00:59.999
    await settle(20);
    expect(sentFor(MINUTE_1)).toHaveLength(0);
    expect(daemon.scheduler.activeCount('plan/tick')).toBe(0);
    await clock.advance(1); // 00:01:00.000
    await daemon.waitEnded(1);
    const [sent] = sentFor(MINUTE_1);
    expect(sent!.headers['x-cron-run-id']).toBe(row!.id);
    expect(daemon.ended[0]).toMatchObject({ id: row!.id, outcome: 'success' });
  });

  it('a pause answered before the instant: the fire planned ahead ends skipped with the pause as its reason, nothing is sent', async () => {
    const clock = new ManualClock(T0);
    daemon = await startTestDaemon(clock, withSink(), freshLedger(kind));
    await clock.advance(29_000); // 00:00:59: planned ahead
    await plannedRows(daemon, 1);
    const [row] = await daemon.store.runningRuns();
    await daemon.scheduler.setPaused('plan', 'tick', true, { reason: 'maintenance', by: 'ops' });
    await daemon.waitEnded(1);
    expect(daemon.ended[0]).toMatchObject({
      id: row!.id,
      outcome: 'skipped',
      error: 'paused by ops: maintenance',
    });
    await clock.advance(61_000); // past 00:01:00 and 00:02:00
    await settle(20);
    expect(sentFor(MINUTE_1)).toHaveLength(0);
    expect(sink.requests.slice(mark).filter((r) => r.url === '/tick')).toHaveLength(0);
    // the key is free again: a manual run of the same instant could still go (not held)
    expect(await daemon.store.keyHolder(row!.runKey)).toBeNull();
  });

  it('no run is listed running before its request left; a running run shows its attempt in flight', async () => {
    // the sink answers after 1.5 s: long enough to look at the ledger while the attempt is in flight
    const slow = await startSink(() => ({ status: 200, delayMs: 1500 }));
    const clock = new ManualClock(T0);
    daemon = await startTestDaemon(
      clock,
      [manifest('plan', [{ ...jobs[0], request: { url: `${slow.url}/tick` } }])],
      freshLedger(kind),
    );
    const running = () => daemon!.store.listRuns({ app: 'plan', phase: 'running' });
    await clock.advance(29_500); // planned ahead, half a second before the instant
    await plannedRows(daemon, 1);
    expect(await daemon.store.listRuns({ app: 'plan', phase: 'planned' })).toHaveLength(1);
    expect(await running()).toEqual([]);
    await clock.advance(500); // the instant: the request leaves
    for (let i = 0; i < 200 && slow.requests.length === 0; i++) await settle(5);
    expect(slow.requests).toHaveLength(1);
    let rows = await running();
    for (let i = 0; i < 200 && rows.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      rows = await running();
    }
    // the attempt is in flight: the row says running, with 1 attempt, before its end
    expect(rows).toMatchObject([{ phase: 'running', attempts: 1, outcome: null }]);
    await daemon.waitEnded(1);
    expect(daemon.ended[0]).toMatchObject({ outcome: 'success', attempts: 1 });
    await slow.close();
  });

  it('a shutdown before the instant takes the planned run back; the next daemon fires it once', async () => {
    const clock = new ManualClock(T0);
    daemon = await startTestDaemon(clock, withSink(), freshLedger(kind));
    await clock.advance(29_000);
    await plannedRows(daemon, 1);
    expect(await daemon.store.runningRuns()).toHaveLength(1);
    const dbPath = daemon.dbPath;
    await daemon.stop();
    const check = await startTestDaemon(clock, withSink(), dbPath);
    // taken back at shutdown: no row, and the restarted daemon plans it again
    await settle(20);
    const rows = await check.store.listRuns({ app: 'plan' });
    expect(rows.filter((r) => r.scheduledTime === MINUTE_1 && r.phase === 'ended')).toHaveLength(0);
    daemon = check;
    await clock.advance(1000);
    await daemon.waitEnded(1);
    expect(sentFor(MINUTE_1)).toHaveLength(1);
    expect(
      (await daemon.store.listRuns({ app: 'plan' })).filter((r) => r.scheduledTime === MINUTE_1),
    ).toHaveLength(1);
  });

  it('after a crash: a restart before the instant takes the planned run back; after it, crashed', async () => {
    for (const late of [false, true]) {
      // what a daemon killed after planning leaves behind: the planned row and its claims
      const clock = new ManualClock(MINUTE_1 - 1000);
      const first = await startTestDaemon(clock, withSink(), freshLedger(kind));
      const [planned] = await first.store.runningRuns();
      await first.stop();
      const store = await openLedger(first.dbPath);
      const run = {
        ...(planned ?? {}),
        id: '01900000-0000-7000-8000-000000000001',
        runKey: `plan/tick#2026-01-01T00:01:00Z#x`,
        app: 'plan',
        job: 'tick',
        scheduleIndex: 0,
        scheduledTime: MINUTE_1,
        trigger: 'schedule' as const,
        phase: 'running' as const,
        outcome: null,
        attempts: 0,
        lastStatus: null,
        createdAt: MINUTE_1 - 1500,
        startedAt: MINUTE_1,
        endedAt: null,
        dueAt: null,
        error: null,
        attemptLog: [],
        outputTruncated: false,
        outputLost: null,
      };
      await store.write([{ kind: 'insert', run }]);
      await store.close();
      const restart = new ManualClock(late ? MINUTE_1 + 5000 : MINUTE_1 - 500);
      daemon = await startTestDaemon(restart, withSink(), first.dbPath);
      await settle(20);
      const row = await daemon.store.getRun(run.id);
      if (late) expect(row).toMatchObject({ phase: 'ended', outcome: 'crashed' });
      else {
        expect(row).toBeNull(); // taken back: nothing was sent, the fire is decided again
        await restart.advance(500);
        await daemon.waitEnded(1);
        expect(daemon.ended[0]).toMatchObject({ scheduledTime: MINUTE_1, outcome: 'success' });
      }
      await daemon.stop();
      daemon = undefined;
    }
  });

  it('a burst of planned runs is launched slice by slice: the event loop turns between slices', async () => {
    const { LAUNCH_SLICE } = await import('../../src/daemon/turn.js');
    const n = 1000;
    const clock = new ManualClock(T0);
    const burst = Array.from({ length: n / 250 }, (_, m) =>
      manifest(
        `burst${m}`,
        Array.from({ length: 250 }, (_, i) => ({
          name: `j${i}`,
          schedule: '* * * * *',
          request: { url: `${sink.url}/burst` },
          policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
        })),
      ),
    );
    daemon = await startTestDaemon(clock, burst, freshLedger(kind));
    await clock.advance(29_000);
    await plannedRows(daemon, n);
    expect(await daemon.store.runningRuns()).toHaveLength(n);
    // count the turns of the event loop while the burst is launched
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const perTurn = new Map<number, number>();
    daemon.scheduler.events.on('run-launched', () =>
      perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1),
    );
    await clock.advance(1000);
    await daemon.waitEnded(n, 30_000);
    ticking = false;
    expect([...perTurn.values()].reduce((a, b) => a + b, 0)).toBe(n);
    // no turn launches more than a slice, a small part of the burst
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(Math.min(LAUNCH_SLICE, n / 4));
    expect(perTurn.size).toBeGreaterThanOrEqual(n / LAUNCH_SLICE);
    expect(daemon.ended.filter((r) => r.outcome === 'success')).toHaveLength(n);
    // and every end is durable
    for (let m = 0; m < n / 250; m++) {
      const rows = await daemon.store.listRuns({ app: `burst${m}`, limit: 250 });
      expect(rows.filter((r) => r.phase === 'ended' && r.outcome === 'success')).toHaveLength(250);
    }
  });
});
