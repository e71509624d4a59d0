/**
 * The cluster's logic on the in-memory coordination seam and manual clocks (no
 * database, no sleeping): replicas of `Cluster` with a fake term scheduler.
 * Each replica has its own clock, so a test can freeze one (its clock stops
 * while the store's goes on) and wake it later, like SIGSTOP / SIGCONT.
 *
 * - failover after a lost connection: the leader steps down before its lease
 *   expires, a standby leads within TTL + TTL/3, at the next epoch, told how
 *   long no one led; the standbys say who leads;
 * - a renewal whose answer comes too late: the leader steps down at its
 *   deadline and never leads again under that epoch;
 * - a new process under the same replica id leads under a new epoch; the old
 *   one, frozen and woken, acts on nothing;
 * - a refused write ends the term at once; a skewed clock takes no lease;
 * - verbs: forwarded and answered; withdrawn after 5 s (503) and then never
 *   carried out; taken late (the leader's answer); in doubt when the taker's
 *   term ends without an answer (409);
 * - the commands are pruned hourly; a lost feed subscription is taken again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Cluster } from '../../src/daemon/cluster/replica.js';
import { FORWARD_TIMEOUT_MS } from '../../src/daemon/cluster/forward.js';
import type { LeaderTerm, TermScheduler } from '../../src/daemon/cluster/term.js';
import { SchedulerError, type TriggerResult } from '../../src/daemon/core.js';
import { DaemonEmitter } from '../../src/daemon/events.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { FencedError } from '../../src/daemon/store/coordination.js';
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import type { BackfillRecord, RunRecord, Store } from '../../src/daemon/store/types.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { MemoryCoordination, type MemoryConnection } from '../helpers/memory-coordination.js';
import { insertRuns, newRun } from './store-fixtures.js';

const TTL = 3000;
const T0 = Date.UTC(2026, 0, 1);

/** A term's scheduler that records what it is asked; verbs wait on `gate` when set. */
class FakeTerm implements TermScheduler {
  readonly calls: string[] = [];
  state: 'new' | 'started' | 'stopped' = 'new';
  gate: Promise<void> | null = null;
  constructor(
    readonly events: DaemonEmitter,
    readonly store: Store,
    readonly leader: LeaderTerm,
  ) {}
  async start(): Promise<void> {
    this.state = 'started';
  }
  async reload(): Promise<void> {}
  async stop(): Promise<void> {
    this.state = 'stopped';
  }
  async trigger(app: string, job: string): Promise<TriggerResult> {
    await this.gate;
    this.calls.push(`trigger ${app}/${job}`);
    return { run: { id: `run-${this.calls.length}` } as RunRecord, admission: 'started' };
  }
  async cancel(runId: string): Promise<RunRecord> {
    await this.gate;
    throw new SchedulerError('not_found', `no run ${runId}`);
  }
  async replay(runId: string): Promise<TriggerResult> {
    throw new SchedulerError('not_found', `no run ${runId}`);
  }
  async setPaused(app: string, job: string, paused: boolean): Promise<void> {
    this.calls.push(`pause ${app}/${job} ${paused}`);
  }
  async backfill(): Promise<BackfillRecord> {
    throw new SchedulerError('not_found', 'no backfills here');
  }
  async cancelBackfill(id: string): Promise<BackfillRecord> {
    throw new SchedulerError('not_found', `no backfill ${id}`);
  }
  isPaused(): boolean {
    return false;
  }
  activeCount(): number {
    return 0;
  }
  queueLength(): number {
    return 0;
  }
}

interface Replica {
  cluster: Cluster;
  conn: MemoryConnection;
  clock: ManualClock;
  terms: FakeTerm[];
  /** What the replica said, with its clock: `leading 1`, `standing-by a@1`, `stepped-down 1: …`. */
  log: string[];
  at: Map<string, number>;
  frozen: boolean;
}

let dir: string;
let store: Store;
let dbClock: ManualClock;
let db: MemoryCoordination;
let replicas: Replica[];
let incarnations = 0;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cronix-cluster-'));
  store = await openSqliteStore(join(dir, 'ledger.db'));
  dbClock = new ManualClock(T0);
  db = new MemoryCoordination(dbClock, store);
  replicas = [];
  incarnations = 0;
});
afterEach(async () => {
  for (const r of replicas) {
    r.frozen = false;
    const stopped = r.cluster.stop(0);
    await world(TTL);
    await stopped;
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts replica `id` (its own clock, at the store's time) and lets its first turn run. */
async function start(id: string): Promise<Replica> {
  const clock = new ManualClock(dbClock.now());
  const events = new DaemonEmitter();
  const r: Replica = {
    cluster: undefined as unknown as Cluster,
    conn: db.connect(),
    clock,
    terms: [],
    log: [],
    at: new Map(),
    frozen: false,
  };
  const say = (line: string): void => {
    r.log.push(line);
    r.at.set(line, clock.now());
  };
  events.on('leading', (e) => say(`leading ${e.epoch}`));
  events.on('standing-by', (e) => say(`standing-by ${e.leader}@${e.epoch}`));
  events.on('stepped-down', (e) => say(`stepped-down ${e.epoch}: ${e.reason}`));
  events.on('warning', (w) => say(`warning: ${w.msg}`));
  r.cluster = new Cluster({
    store,
    coordination: r.conn,
    replicaId: id,
    leaseMs: TTL,
    clock,
    events,
    metrics: new DaemonMetrics(() => clock.now()),
    incarnation: () => `${id}#${++incarnations}`,
    schedulerFor: (s, leader) => {
      const term = new FakeTerm(events, s, leader);
      r.terms.push(term);
      return term;
    },
  });
  replicas.push(r);
  await r.cluster.start([]);
  await world(0);
  return r;
}

/**
 * Lets `ms` pass for the store and every replica not frozen, in steps of `stepMs`, letting
 * what the wake-ups started run for `rounds` more turns of the event loop after each step.
 */
async function world(ms: number, stepMs = 50, rounds = 10): Promise<void> {
  for (let left = ms; ; left -= stepMs) {
    const step = Math.min(stepMs, Math.max(0, left));
    dbClock.t += step; // nothing sleeps on the store's clock
    for (const r of replicas) if (!r.frozen) await r.clock.advance(step);
    await settle(rounds);
    if (left <= stepMs) return;
  }
}

/** Lets time pass until `done()` holds (at most `limitMs`); returns how long it took. */
async function until(done: () => boolean, limitMs = 60_000): Promise<number> {
  const from = dbClock.now();
  while (!done()) {
    if (dbClock.now() - from > limitMs) throw new Error('the cluster never got there');
    await world(50);
  }
  return dbClock.now() - from;
}

describe('leases and terms', () => {
  it('a leader that loses its store steps down before its lease expires; a standby leads within TTL + TTL/3', async () => {
    const a = await start('a');
    await world(400); // the standbys' turns fall between the leader's
    const b = await start('b');
    const c = await start('c');
    expect(a.log).toEqual(['leading 1']);
    expect(b.log).toEqual(['standing-by a@1']);
    expect(c.log).toEqual(['standing-by a@1']);
    expect(a.terms[0]!.leader).toMatchObject({ epoch: 1 });
    expect(a.terms[0]!.leader.gap).toBeUndefined(); // the store's first term
    expect(a.terms[0]!.leader.mayAttempt()).toBeNull();

    const cut = dbClock.now();
    a.conn.cut();
    const took = await until(() => b.cluster.leading || c.cluster.leading);
    const next = b.cluster.leading ? b : c;
    const other = next === b ? c : b;
    expect(took).toBeLessThanOrEqual(TTL + TTL / 3);
    const down = a.at.get('stepped-down 1: the lease could not be renewed in time')!;
    expect(down).toBeDefined();
    expect(a.terms[0]!.state).toBe('stopped');
    expect(a.terms[0]!.leader.mayAttempt()).toBe('no longer the leader of epoch 1');
    // the new term began after the old lease ran out, and the old leader had stopped before it
    const gap = next.terms[0]!.leader.gap!;
    expect(next.terms[0]!.leader.epoch).toBe(2);
    expect(down).toBeLessThan(gap.from);
    expect(gap.from).toBeLessThanOrEqual(gap.to);
    expect(gap.to).toBe(cut + took);
    await world(TTL);
    expect(other.log.at(-1)).toBe(`standing-by ${next === b ? 'b' : 'c'}@2`);
    // the old term's store refuses every write without asking
    await expect(insertRuns(a.terms[0]!.store, [newRun()])).rejects.toThrow(FencedError);
    expect(a.cluster.role()).toBe('standby');
    expect((await next.cluster.cluster()).leader).toMatchObject({ epoch: 2 });
  });

  it('a renewal whose answer comes too late: the leader steps down at its deadline, and leads again only at a new epoch', async () => {
    const a = await start('a');
    await world(500);
    a.conn.hold(); // the next renewal reaches the store, its answer does not come back
    const deadline = T0 + TTL - TTL / 3;
    await until(() => a.log.length > 1);
    expect(a.log).toEqual(['leading 1', 'stepped-down 1: the lease could not be renewed in time']);
    expect(a.at.get(a.log[1]!)).toBe(deadline + 1); // the watchdog, 1 ms past the deadline
    expect(a.terms[0]!.leader.mayAttempt()).toBe('no longer the leader of epoch 1');
    a.conn.release(); // the late answer says "renewed at epoch 1": too late, that term is over
    await until(() => a.cluster.leading);
    expect(a.log.slice(2)).toEqual(['leading 2']);
    expect(a.terms.map((t) => t.leader.epoch)).toEqual([1, 2]);
    expect(a.terms[0]!.leader.mayAttempt()).not.toBeNull();
    expect(a.terms[1]!.leader.mayAttempt()).toBeNull();
  });

  it('a new process under the same replica id leads under a new epoch; the old one, frozen and woken, acts on nothing', async () => {
    const old = await start('a');
    expect(old.log).toEqual(['leading 1']);
    old.frozen = true; // SIGSTOP: its clock and timers stop, the store's time goes on
    const fresh = await start('a'); // systemd's replacement, same --replica-id
    expect(fresh.log).toEqual(['standing-by a@1']); // the live lease is another incarnation's
    await until(() => fresh.cluster.leading);
    expect(fresh.log.at(-1)).toBe('leading 2');
    expect(db.lease).toMatchObject({ replica: 'a', incarnation: 'a#2', epoch: 2 });
    expect((await fresh.cluster.cluster()).leader).toMatchObject({ replica: 'a', epoch: 2 });
    // SIGCONT: its clock shows the time at once; before any overdue timer runs, an attempt is
    // refused already; then the timers run
    old.clock.t = dbClock.now();
    expect(old.terms[0]!.leader.mayAttempt()).toBe('no longer the leader of epoch 1');
    old.frozen = false;
    await world(0);
    expect(old.log[1]).toMatch(/^stepped-down 1: /);
    // its writes are refused by the fence (and its term store is revoked)
    await expect(insertRuns(old.terms[0]!.store, [newRun()])).rejects.toThrow(FencedError);
    await expect(
      insertRuns(old.conn.termStore({ holder: 'a', epoch: 1 }), [newRun()]),
    ).rejects.toThrow(FencedError);
    await world(TTL);
    expect(old.cluster.leading).toBe(false);
    expect(old.log.at(-1)).toBe('standing-by a@2');
    expect(fresh.cluster.epoch).toBe(2);
    expect(fresh.terms[0]!.state).toBe('started');
  });

  it('a write the store refuses for a stale epoch ends the term at once', async () => {
    const a = await start('a');
    db.lease = { ...db.lease!, replica: 'intruder', epoch: 9 };
    await expect(insertRuns(a.terms[0]!.store, [newRun()])).rejects.toThrow(FencedError);
    await settle(10);
    expect(a.log).toEqual([
      'leading 1',
      'stepped-down 1: the lease is no longer held by a at epoch 1',
    ]);
    expect(a.terms[0]!.state).toBe('stopped');
  });

  it('a replica whose clock is more than 2 s off the store’s takes no lease', async () => {
    db.skewMs = 2500;
    const a = await start('a');
    await world(3 * TTL);
    expect(a.cluster.leading).toBe(false);
    expect(a.log[0]).toMatch(/^warning: not taking the lease: this clock is -2500 ms off/);
    db.skewMs = 0;
    await world(61_000); // the next skew check
    expect(a.cluster.leading).toBe(true);
  });
});

describe('verbs on a standby', () => {
  it('are carried out by the leader and answered with its answer', async () => {
    const a = await start('a');
    const b = await start('b');
    const answer = b.cluster.trigger('shop', 'report');
    await settle(20);
    await expect(answer).resolves.toMatchObject({ run: { id: 'run-1' }, admission: 'started' });
    await expect(b.cluster.cancel('nope')).rejects.toMatchObject({ code: 'not_found' });
    expect(a.terms[0]!.calls).toEqual(['trigger shop/report']);
  });

  it('unanswered within 5 s: withdrawn, answered 503, and never carried out by a later leader', async () => {
    db.lease = {
      replica: 'ghost',
      incarnation: 'g',
      epoch: 1,
      expiresAt: T0 + 10_000,
      acquiredAt: T0,
      previousExpiresAt: null,
    };
    const b = await start('b');
    const answer = b.cluster.trigger('shop', 'report');
    const failed = expect(answer).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/withdrawn and will not be carried out/),
    });
    const waited = await until(() => db.commandsIn('abandoned').length === 1);
    await failed;
    expect(waited).toBeGreaterThanOrEqual(FORWARD_TIMEOUT_MS);
    // the ghost's lease runs out; b leads and goes through the commands: not this one
    await until(() => b.cluster.leading);
    const c = await start('c');
    await expect(c.cluster.setPaused('shop', 'report', true)).resolves.toBeUndefined();
    expect(b.terms[0]!.calls).toEqual(['pause shop/report true']);
    expect(db.commandsIn('abandoned')).toHaveLength(1);
  });

  it('taken by the leader before the deadline but answered after it: the leader’s answer, not 503', async () => {
    const a = await start('a');
    const b = await start('b');
    let open!: () => void;
    a.terms[0]!.gate = new Promise((r) => (open = r));
    const answer = b.cluster.trigger('shop', 'report');
    await settle(20);
    expect(db.commandsIn('taken')).toHaveLength(1);
    await world(FORWARD_TIMEOUT_MS + 2000);
    open();
    await settle(20);
    await expect(answer).resolves.toMatchObject({ admission: 'started' });
    expect(a.terms[0]!.calls).toEqual(['trigger shop/report']);
  });

  it('taken, and the taker’s term ended without an answer: 409 in doubt', async () => {
    const a = await start('a');
    const b = await start('b');
    a.terms[0]!.gate = new Promise(() => undefined); // never answers
    const answer = b.cluster.trigger('shop', 'report');
    const doubted = expect(answer).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/^in doubt: the leader of epoch 1 took the request/),
    });
    await settle(20);
    a.conn.cut();
    await until(() => b.cluster.leading);
    await world(FORWARD_TIMEOUT_MS);
    await doubted;
  });
});

describe('verbs when the standby loses the store', () => {
  it('before the hand-off: 503, nothing was handed over', async () => {
    const a = await start('a');
    const b = await start('b');
    b.conn.cut();
    await expect(b.cluster.trigger('shop', 'report')).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^could not hand the request to the leader/),
    });
    await settle(20);
    expect(a.terms[0]!.calls).toEqual([]);
  });

  it('after the hand-off: 409 in doubt once the store has not answered for another 5 s', async () => {
    const a = await start('a');
    const b = await start('b');
    a.terms[0]!.gate = new Promise(() => undefined);
    const answer = b.cluster.trigger('shop', 'report');
    const doubted = expect(answer).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/^in doubt: the store did not answer whether a leader took/),
    });
    await settle(20);
    b.conn.cut();
    await world(2 * FORWARD_TIMEOUT_MS + 500);
    await doubted;
    expect(db.commandsIn('taken')).toHaveLength(1); // the leader has it: "in doubt" is the truth
  });
});

describe('housekeeping', () => {
  it('the leader prunes finished commands hourly', async () => {
    const a = await start('a');
    const standby = db.connect(); // a standby's connection, without its timers
    for (let i = 0; i < 3; i++)
      await standby.enqueueCommand('pause', {
        kind: 'pause',
        app: 'shop',
        job: 'r',
        paused: true,
      });
    await settle(20);
    expect(db.commandsIn('done')).toHaveLength(3);
    expect(a.terms[0]!.calls).toHaveLength(3);
    // pruned at the first hourly pass after they are an hour old
    await world(3_600_000 - TTL, TTL / 3, 0);
    expect(db.commands.size).toBe(3);
    await world(3_600_000 + 2 * TTL, TTL / 3, 0);
    expect(db.commands.size).toBe(0);
  });

  it('a lost feed subscription is taken again on the clock', async () => {
    await start('a');
    const b = await start('b');
    expect(db.subscribers.size).toBe(2);
    b.conn.cut();
    expect(db.subscribers.size).toBe(1);
    b.conn.restore();
    await until(() => db.subscribers.size === 2);
    // and wake-ups reach it again: a forwarded verb is answered without waiting for a poll
    await expect(
      Promise.all([b.cluster.trigger('shop', 'report'), settle(20)]).then(([r]) => r),
    ).resolves.toMatchObject({ admission: 'started' });
  });
});
