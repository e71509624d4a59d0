/**
 * The admission state machine (`src/daemon/admission/lane.ts`) and the
 * pipeline that carries out its effects, proven by a property test with no
 * store, no timer and no I/O: a model ledger answers the pipeline's writes in
 * order (with the stores' claim rules: a fire claimed once, a run key held by
 * one planned or running run and kept for good once it succeeded), and
 * fast-check interleaves scheduled, planned-ahead, catch-up, manual, delayed,
 * queued, Replace, replay and backfill admissions, cancels, pauses, run ends and the
 * ledger's answers.
 *
 * Checked at every step (SPEC §9 items 3 and 4): runs in flight per job never
 * exceed max_concurrent (Allow excepted); a run is launched only while its row
 * holds its run key, never for a key that succeeded, never while another run
 * of its key is in flight; Replace never stops a run twice; an Enqueue job's
 * queued runs start in the order they were queued. Checked at the end, once
 * everything is drained: no slot, no queue, no row left planned, queued or
 * running, and every stopped run ended `stopped` without being sent.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { Lane } from '../../src/daemon/admission/lane.js';
import { DaemonEmitter } from '../../src/daemon/events.js';
import type { Ledger } from '../../src/daemon/ledger.js';
import { Pipeline } from '../../src/daemon/pipeline.js';
import { buildRegistry } from '../../src/daemon/registry.js';
import { newRun } from '../../src/daemon/runs.js';
import type { LedgerOp, LedgerResult, NewRun, RunRecord } from '../../src/daemon/store/types.js';
import { manifest } from '../helpers/daemon.js';

const JOBS: Record<string, Record<string, unknown>> = {
  forbid: { concurrency: 'Forbid' },
  forbid2: { concurrency: 'Forbid', max_concurrent: 2 },
  replace: { concurrency: 'Replace' },
  replace2: { concurrency: 'Replace', max_concurrent: 2 },
  enqueue: { concurrency: 'Enqueue', max_concurrent: 2, queue_max: 3 },
  allow: { concurrency: 'Allow' },
};
const NAMES = Object.keys(JOBS);
const REGISTRY = buildRegistry([
  manifest(
    'm',
    NAMES.map((name) => ({
      name,
      schedule: '* * * * *',
      request: { url: `http://cronix.test/${name}` },
      policy: JOBS[name],
    })),
  ),
]);
const LIMIT = (name: string): number =>
  JOBS[name]!['concurrency'] === 'Allow' ? Infinity : Number(JOBS[name]!['max_concurrent'] ?? 1);

/** A model of the stores' ledger: rows, the fire claim and the run-key claim. */
class ModelLedger {
  readonly rows = new Map<string, RunRecord>();
  readonly fires = new Set<string>();
  readonly keys = new Map<string, { runId: string; state: 'running' | 'succeeded' }>();
  private seq = 0;
  /** Groups submitted and not yet answered, in order. */
  readonly pending: { ops: readonly LedgerOp[]; resolve(r: LedgerResult[]): void }[] = [];

  submit(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
    return new Promise((resolve) => this.pending.push({ ops, resolve }));
  }

  /** Answers the oldest group (one transaction). */
  step(): boolean {
    const g = this.pending.shift();
    if (!g) return false;
    g.resolve(g.ops.map((op) => this.apply(op)));
    return true;
  }

  private claim(run: RunRecord): string | null {
    const held = this.keys.get(run.runKey);
    if (!held) {
      this.keys.set(run.runKey, { runId: run.id, state: 'running' });
      return null;
    }
    return held.state === 'succeeded' ? 'run key already succeeded' : 'run key is being run';
  }

  private apply(op: LedgerOp): LedgerResult {
    switch (op.kind) {
      case 'insert': {
        const r = op.run;
        if ((r.trigger === 'schedule' || r.trigger === 'catchup') && r.scheduleIndex !== null) {
          const fire = `${r.app}/${r.job}#${r.scheduleIndex}#${r.scheduledTime}`;
          if (this.fires.has(fire)) return { kind: 'fire-exists' };
          this.fires.add(fire);
        }
        let row: RunRecord = { ...r, seq: ++this.seq };
        if (row.phase === 'planned') {
          const held = this.claim(row);
          if (held !== null)
            row = { ...row, phase: 'ended', outcome: 'duplicate', endedAt: 0, error: held };
        }
        this.rows.set(row.id, row);
        return { kind: 'recorded', run: row };
      }
      case 'start': {
        const row = this.rows.get(op.id);
        if (!row || row.phase !== 'queued') return { kind: 'gone' };
        const held = this.claim(row);
        if (held !== null) {
          const ended = { ...row, phase: 'ended' as const, outcome: 'duplicate' as const };
          this.rows.set(op.id, ended);
          return { kind: 'duplicate', run: ended };
        }
        const started = { ...row, phase: 'planned' as const, startedAt: op.startedAt };
        this.rows.set(op.id, started);
        return { kind: 'started', run: started };
      }
      case 'end': {
        const row = this.rows.get(op.id);
        if (!row || row.phase === 'ended') return { kind: 'gone' };
        const ended: RunRecord = { ...row, ...op.patch, phase: 'ended' };
        this.rows.set(op.id, ended);
        const held = this.keys.get(row.runKey);
        if (op.patch.outcome === 'success')
          this.keys.set(row.runKey, { runId: row.id, state: 'succeeded' });
        else if (held?.runId === row.id && held.state === 'running') this.keys.delete(row.runKey);
        return { kind: 'ended', run: ended };
      }
      case 'due':
        return this.rows.get(op.id)?.phase === 'queued' ? { kind: 'ok' } : { kind: 'gone' };
      default:
        return { kind: 'ok' };
    }
  }
}

type Command =
  | { t: 'fire'; job: string; instant: number; catchup: boolean }
  | { t: 'plan'; job: string; instant: number }
  | { t: 'manual'; job: string; key: number }
  | { t: 'replay'; job: string; instant: number }
  | { t: 'backfill'; job: string; instant: number }
  | { t: 'delayed'; job: string; key: number }
  | { t: 'admitDelayed'; pick: number }
  | { t: 'due'; pick: number }
  | { t: 'cancel'; job: string; pick: number }
  | { t: 'pause'; job: string; paused: boolean }
  | { t: 'complete'; pick: number; ok: boolean }
  | { t: 'ledger'; n: number };

const job = fc.constantFrom(...NAMES);
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ t: fc.constant('fire' as const), job, instant: fc.nat(5), catchup: fc.boolean() }),
  fc.record({ t: fc.constant('plan' as const), job, instant: fc.nat(5) }),
  fc.record({ t: fc.constant('manual' as const), job, key: fc.nat(3) }),
  fc.record({ t: fc.constant('replay' as const), job, instant: fc.nat(5) }),
  fc.record({ t: fc.constant('backfill' as const), job, instant: fc.nat(5) }),
  fc.record({ t: fc.constant('delayed' as const), job, key: fc.nat(3) }),
  fc.record({ t: fc.constant('admitDelayed' as const), pick: fc.nat(20) }),
  fc.record({ t: fc.constant('due' as const), pick: fc.nat(20) }),
  fc.record({ t: fc.constant('cancel' as const), job, pick: fc.nat(20) }),
  fc.record({ t: fc.constant('pause' as const), job, paused: fc.boolean() }),
  fc.record({ t: fc.constant('complete' as const), pick: fc.nat(20), ok: fc.boolean() }),
  fc.record({ t: fc.constant('ledger' as const), n: fc.integer({ min: 1, max: 4 }) }),
);

/** Lets the pipeline's awaits run (microtasks only: no timer). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

class World {
  readonly ledger = new ModelLedger();
  readonly lanes = new Map(NAMES.map((n) => [n, new Lane(REGISTRY.get(`m/${n}`)!)]));
  /** Launched runs not yet ended, by id. */
  readonly inflight = new Map<string, { job: string; run: RunRecord; aborted: boolean }>();
  readonly aborted = new Set<string>();
  /** Runs cancelled before they were launched: never launched after. */
  readonly cancelledUnlaunched = new Set<string>();
  /** Runs planned ahead and not launched when their job was paused: never launched after. */
  readonly pausedUnlaunched = new Set<string>();
  readonly everLaunched = new Set<string>();
  /** Runs aborted while their attempts were in flight: they end `stopped`. */
  readonly stoppedInFlight = new Set<string>();
  readonly planned: { job: string; id: string }[] = [];
  readonly delayed: { job: string; run: NewRun }[] = [];
  /** Enqueue: ids in the order they were queued, and in the order they were claimed. */
  readonly queuedOrder: string[] = [];
  readonly startOrder: string[] = [];
  readonly problems: string[] = [];
  private now = 1_000_000;
  private ids = 0;
  readonly pipeline: Pipeline;

  constructor() {
    const events = new DaemonEmitter();
    const ledger = this.ledger;
    this.pipeline = new Pipeline({
      ledger: {
        submit: (ops: readonly LedgerOp[]) => {
          for (const op of ops)
            if (op.kind === 'start' && this.jobOf(op.id) === 'enqueue') this.startOrder.push(op.id);
          return ledger.submit(ops);
        },
      } as unknown as Ledger,
      clock: { now: () => this.now, sleep: () => Promise.resolve(true) },
      events,
      launch: (lane, run) => this.launched(lane.job.job.name, run),
      abort: (id) => {
        if (this.aborted.has(id)) this.problems.push(`run ${id} stopped twice`);
        this.aborted.add(id);
        const f = this.inflight.get(id);
        if (f) {
          f.aborted = true;
          this.stoppedInFlight.add(id);
        }
      },
      drop: () => undefined,
    });
  }

  private jobOf(id: string): string | undefined {
    return this.ledger.rows.get(id)?.job;
  }

  private launched(name: string, run: RunRecord): void {
    const held = this.ledger.keys.get(run.runKey);
    if (held?.runId !== run.id || held.state !== 'running')
      this.problems.push(
        `run ${run.id} launched without holding its key (${JSON.stringify(held)})`,
      );
    for (const f of this.inflight.values())
      if (f.run.runKey === run.runKey)
        this.problems.push(`two runs of key ${run.runKey} in flight`);
    if (this.aborted.has(run.id)) this.problems.push(`stopped run ${run.id} launched`);
    if (this.cancelledUnlaunched.has(run.id))
      this.problems.push(`cancelled run ${run.id} launched`);
    if (this.pausedUnlaunched.has(run.id))
      this.problems.push(`run ${run.id} planned before a pause launched after it`);
    this.everLaunched.add(run.id);
    this.inflight.set(run.id, { job: name, run, aborted: false });
    const n = [...this.inflight.values()].filter((f) => f.job === name).length;
    if (n > LIMIT(name)) this.problems.push(`${name}: ${n} runs in flight`);
  }

  private newRun(name: string, key: string, extra: Partial<NewRun>): NewRun {
    this.now += 1;
    const job = REGISTRY.get(`m/${name}`)!;
    return newRun(job, null, this.now, 'manual', this.now, {
      id: `r${++this.ids}`,
      runKey: `m/${name}#${key}`,
      ...extra,
    });
  }

  private admit(name: string, run: NewRun): void {
    const lane = this.lanes.get(name)!;
    const ticket = lane.admit(run, this.now);
    if (ticket.decision === 'queue' && name === 'enqueue') this.queuedOrder.push(run.id);
    void this.pipeline.record([{ lane, ticket }]);
  }

  async run(c: Command): Promise<void> {
    switch (c.t) {
      case 'fire': {
        const trigger = c.catchup ? 'catchup' : 'schedule';
        const at = 60_000 * c.instant;
        this.admit(
          c.job,
          this.newRun(c.job, `i${c.instant}`, { trigger, scheduleIndex: 0, scheduledTime: at }),
        );
        break;
      }
      case 'plan': {
        const lane = this.lanes.get(c.job)!;
        const at = 60_000 * c.instant;
        const run = this.newRun(c.job, `i${c.instant}`, {
          trigger: 'schedule',
          scheduleIndex: 0,
          scheduledTime: at,
        });
        const ticket = lane.plan(run, this.now + 1000, this.now);
        if (ticket) {
          this.planned.push({ job: c.job, id: run.id });
          void this.pipeline.record([{ lane, ticket }]);
        }
        break;
      }
      case 'manual':
        this.admit(c.job, this.newRun(c.job, `m${c.key}`, {}));
        break;
      case 'replay':
        this.admit(
          c.job,
          this.newRun(c.job, `i${c.instant}`, { trigger: 'replay', scheduleIndex: 0 }),
        );
        break;
      case 'backfill': {
        // a backfill's run: offered, decided only with room (never skipped, queued or replacing)
        const lane = this.lanes.get(c.job)!;
        const run = this.newRun(c.job, `i${c.instant}`, {
          trigger: 'backfill',
          scheduleIndex: 0,
          scheduledTime: 60_000 * c.instant,
        });
        const queuedBefore = lane.queued;
        const ticket = lane.offer(run, this.now);
        if (ticket) {
          if (ticket.decision !== 'start' || queuedBefore > 0)
            this.problems.push(`backfill run ${run.id} admitted as ${ticket.decision}`);
          void this.pipeline.record([{ lane, ticket }]);
        }
        break;
      }
      case 'delayed': {
        const run = this.newRun(c.job, `d${c.key}`, { dueAt: this.now + 10 });
        this.delayed.push({ job: c.job, run });
        void this.ledger.submit([{ kind: 'insert', run }]);
        break;
      }
      case 'admitDelayed': {
        const d = this.delayed.splice(c.pick % Math.max(1, this.delayed.length), 1)[0];
        if (!d) break;
        const phase = this.ledger.rows.get(d.run.id)?.phase;
        if (phase === undefined) this.delayed.push(d); // not yet recorded: due later
        if (phase !== 'queued') break;
        if (d.job === 'enqueue') this.queuedOrder.push(d.run.id);
        this.pipeline.admitExisting(this.lanes.get(d.job)!, d.run);
        break;
      }
      case 'due': {
        const p = this.planned.splice(c.pick % Math.max(1, this.planned.length), 1)[0];
        if (!p) break;
        const lane = this.lanes.get(p.job)!;
        if (lane.slot(p.id)?.state === 'claiming') this.planned.push(p); // due again later
        this.pipeline.apply(lane, lane.due(p.id));
        break;
      }
      case 'cancel': {
        const lane = this.lanes.get(c.job)!;
        const ids = [
          ...lane.allSlots().map((s) => s.run.id),
          ...lane.queuedRuns().map((r) => r.id),
        ];
        const id = ids[c.pick % Math.max(1, ids.length)];
        if (id === undefined) break;
        if (!this.everLaunched.has(id) && lane.slot(id)?.stopReason == null)
          this.cancelledUnlaunched.add(id);
        const r = lane.cancel(id, 'cancelled');
        if (r.found === 'queued') void this.pipeline.endUnstarted(lane, r.run, 'cancelled');
        else if (r.found === 'slot') this.pipeline.apply(lane, r.effects);
        break;
      }
      case 'pause': {
        const lane = this.lanes.get(c.job)!;
        if (!c.paused) {
          lane.paused = false;
          break;
        }
        for (const slot of lane.allSlots())
          if (slot.ahead && !this.everLaunched.has(slot.run.id))
            this.pausedUnlaunched.add(slot.run.id);
        this.pipeline.apply(lane, lane.pause({ reason: null, by: 'test', since: this.now }));
        break;
      }
      case 'complete': {
        const list = [...this.inflight.values()];
        const f = list[c.pick % Math.max(1, list.length)];
        if (f) await this.complete(f, c.ok);
        break;
      }
      case 'ledger':
        for (let i = 0; i < c.n; i++) {
          this.ledger.step();
          await flush();
        }
        break;
    }
    await flush();
  }

  /** Ends a launched run as the execution room does: the end is written, then the lane told. */
  private async complete(
    f: { job: string; run: RunRecord; aborted: boolean },
    ok: boolean,
  ): Promise<void> {
    this.inflight.delete(f.run.id);
    const outcome = f.aborted ? 'stopped' : ok ? 'success' : 'retries_exhausted';
    const written = this.ledger.submit([
      { kind: 'end', id: f.run.id, patch: { outcome, endedAt: this.now, error: null } },
    ]);
    await flush();
    while (this.ledger.step()) await flush();
    const [res] = await written;
    const lane = this.lanes.get(f.job)!;
    this.pipeline.finished(lane, res?.kind === 'ended' ? res.run : { ...f.run, phase: 'ended' });
    await flush();
  }

  /** Drains everything: answers, instants, ends, until nothing moves. */
  async drain(): Promise<void> {
    for (let round = 0; round < 1000; round++) {
      let moved = false;
      while (this.ledger.step()) {
        moved = true;
        await flush();
      }
      for (const p of this.planned.splice(0)) {
        const lane = this.lanes.get(p.job)!;
        this.pipeline.apply(lane, lane.due(p.id));
        if (lane.slot(p.id)?.state === 'claiming') this.planned.push(p);
        moved = true;
      }
      for (const d of this.delayed.splice(0)) {
        if (d.job === 'enqueue') this.queuedOrder.push(d.run.id);
        if (this.ledger.rows.get(d.run.id)?.phase === 'queued')
          this.pipeline.admitExisting(this.lanes.get(d.job)!, d.run);
        moved = true;
      }
      await flush();
      for (const f of [...this.inflight.values()]) {
        await this.complete(f, true);
        moved = true;
      }
      if (!moved) return;
    }
  }
}

/** The property's seed: fast-check's own (a new one each run) unless CRONIX_PROPERTY_SEED gives one to replay. */
function propertySeed(): { seed?: number } {
  const given = process.env['CRONIX_PROPERTY_SEED'];
  return given === undefined || given === 'random' ? {} : { seed: Number(given) };
}

/** Runs commands through a fresh world, checking the invariants after each and once drained. */
async function replay(commands: Command[]): Promise<World> {
  const w = new World();
  for (const c of commands) {
    await w.run(c);
    expect(w.problems).toEqual([]);
  }
  await w.drain();
  expect(w.problems).toEqual([]);
  return w;
}

// Counterexamples the property found (2026-11-27), kept as regressions.
it('a queued run the queue moved into a slot before its row was recorded is claimed once (Enqueue max_concurrent 2)', async () => {
  // the second manual trigger's key is held: its slot is freed and the queue moves the fire
  // into it before the fire's queued row is answered; that answer used to claim it again, the
  // second claim's refusal freed its slot while it ran, and a third run went in flight
  await replay([
    { t: 'manual', job: 'enqueue', key: 2 },
    { t: 'manual', job: 'enqueue', key: 2 },
    { t: 'fire', job: 'enqueue', instant: 0, catchup: false },
    { t: 'replay', job: 'enqueue', instant: 1 },
    { t: 'replay', job: 'forbid', instant: 0 },
  ]);
});

it('a Replace newcomer refused by the ledger hands its place in the chain on (Replace max_concurrent 1)', async () => {
  // the second fire of instant 0 is refused (already recorded); the replay that replaced it
  // used to wait for nothing and start beside the first fire of instant 0
  await replay([
    { t: 'fire', job: 'replace', instant: 1, catchup: false },
    { t: 'fire', job: 'replace', instant: 0, catchup: false },
    { t: 'fire', job: 'replace', instant: 0, catchup: false },
    { t: 'replay', job: 'replace', instant: 1 },
  ]);
});

it('a refused Replace newcomer whose victim a later newcomer counted on stopping leaves it stopped (Replace max_concurrent 1)', async () => {
  // the second fire of instant 1 stops the first, is cancelled, then refused; a fire of instant
  // 0 came while every slot was stopping and waits with the first fire for the manual run's
  // place: un-stopping the first fire at the refusal put both in flight
  await replay([
    { t: 'manual', job: 'replace', key: 0 },
    { t: 'fire', job: 'replace', instant: 1, catchup: false },
    { t: 'fire', job: 'replace', instant: 1, catchup: false },
    { t: 'cancel', job: 'replace', pick: 17 },
    { t: 'fire', job: 'replace', instant: 0, catchup: false },
  ]);
});

it('admission holds its invariants over any interleaving (no store, no timers)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 60 }), async (commands) => {
      const w = await replay(commands);
      for (const lane of w.lanes.values()) {
        expect({ job: lane.key, active: lane.active, queued: lane.queued }).toEqual({
          job: lane.key,
          active: 0,
          queued: 0,
        });
      }
      for (const row of w.ledger.rows.values()) {
        expect({ id: row.id, phase: row.phase }).toEqual({ id: row.id, phase: 'ended' });
        if (w.stoppedInFlight.has(row.id)) expect(row.outcome).toBe('stopped');
      }
      // an Enqueue job's queued runs were claimed in the order they were queued
      const queued = new Set(w.queuedOrder);
      const claimed = w.startOrder.filter((id) => queued.has(id));
      const order = w.queuedOrder.filter((id) => claimed.includes(id));
      expect(claimed).toEqual(order);
    }),
    // a new seed each run (fast-check prints it with a counterexample; CRONIX_PROPERTY_SEED
    // replays one; CRONIX_PROP_RUNS explores longer)
    { numRuns: Number(process.env['CRONIX_PROP_RUNS'] ?? 1000), ...propertySeed() },
  );
});
