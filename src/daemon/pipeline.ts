/**
 * The thin loop that carries out the lanes' decisions (`admission/lane.ts`):
 * it writes a ticket's row through the ordered ledger, hands the ledger's
 * answer back to the lane, and carries out the effects the lane returns —
 * launch a run (the execution room), claim a queued run, end one that never
 * started, abort one, announce an end. It decides nothing itself, so every run,
 * whatever caused it, goes the same way:
 *
 *   lane decides (synchronously) → ledger records (durable) → lane settles →
 *   effects (launch …) → end durable → lane releases → what waited moves.
 */
import type { Clock } from '../fire/types.js';
import type { DecisionKind, Effect, Lane, Ticket } from './admission/lane.js';
import type { AdmissionName, TriggerResult } from './admission/types.js';
import type { DaemonEmitter } from './events.js';
import type { Ledger } from './ledger.js';
import type { EndPatch, LedgerOp, LedgerResult, NewRun, RunRecord } from './store/types.js';

/** What the pipeline needs of the daemon around it. */
export interface PipelineDeps {
  ledger: Ledger;
  clock: Clock;
  events: DaemonEmitter;
  /** Sends the attempts of a run whose run key is claimed; {@link Pipeline.finished} follows. */
  launch(lane: Lane, run: RunRecord): void;
  /** Aborts the attempts of a launched run. */
  abort(id: string): void;
  /** A removed job's lane whose last slot was released: forget it. */
  drop(lane: Lane): void;
}

/** One decided run and its lane. */
export interface Decided {
  lane: Lane;
  ticket: Ticket;
}

/** See the module comment. */
export class Pipeline {
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly waiters = new Map<string, (() => void)[]>();
  /** Shutting down: queued runs are no longer claimed (they stay queued for the next start). */
  stopping = false;

  constructor(private readonly deps: PipelineDeps) {}

  /**
   * Records decided runs (plus `extra` ops such as their checkpoint) as one ledger group, then
   * carries out what each lane makes of its answer. Null for a fire whose instant was already
   * recorded.
   */
  async record(
    items: readonly Decided[],
    extra: LedgerOp[] = [],
  ): Promise<(TriggerResult | null)[]> {
    const ops: LedgerOp[] = items.map((d) => ({ kind: 'insert', run: d.ticket.row }));
    for (const d of items) {
      this.admitted(d.lane, d.ticket.decision);
      // a skipped instant is consumed with the row that records its fire (SPEC §16)
      const at = d.ticket.skip;
      if (at !== null)
        ops.push({ kind: 'skip-done', app: d.lane.job.app, job: d.lane.job.job.name, at });
    }
    const results = await this.deps.ledger.submit(extra.length > 0 ? [...ops, ...extra] : ops);
    return items.map((d, i) => this.settle(d, results[i] as LedgerResult));
  }

  private settle({ lane, ticket }: Decided, result: LedgerResult): TriggerResult | null {
    if (result.kind === 'recorded') this.deps.events.emit('run-recorded', result.run);
    this.apply(lane, lane.recorded(ticket, result));
    if (result.kind !== 'recorded') return null;
    return { run: result.run, admission: admissionName(ticket.decision, result.run) };
  }

  /** Admits a run that already has a queued row (a delayed run now due, a recovered one). */
  admitExisting(lane: Lane, run: NewRun): void {
    const { decision, effects } = lane.admitExisting(run, this.deps.clock.now());
    this.admitted(lane, decision);
    this.apply(lane, effects);
  }

  /** Ends a queued run that holds no slot (cancelled, its job removed); null if it had ended. */
  async endUnstarted(lane: Lane | null, run: NewRun, reason: string): Promise<RunRecord | null> {
    return this.end(lane, run, {
      outcome: 'stopped',
      endedAt: this.deps.clock.now(),
      error: reason,
    });
  }

  /** A launched run's end is durable: its slot is released, then the end is announced. */
  finished(lane: Lane, ended: RunRecord): void {
    const effects = lane.released(ended.id);
    this.announce(lane, ended);
    this.apply(lane, effects);
  }

  /** Resolves once the run no longer holds a slot (at once when it holds none). */
  whenReleased(lane: Lane, id: string): Promise<void> {
    if (!lane.slot(id)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push(resolve);
      this.waiters.set(id, list);
    });
  }

  /** Whether writes or claims this pipeline started are still in flight. */
  get busy(): boolean {
    return this.inflight.size > 0;
  }

  /** Resolves once the writes and claims this pipeline started have settled. */
  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** Carries out a lane's effects, in order. */
  apply(lane: Lane, effects: readonly Effect[]): void {
    for (const e of effects) {
      switch (e.kind) {
        case 'launch':
          this.deps.launch(lane, e.run);
          break;
        case 'start':
          if (!this.stopping) this.track(this.start(lane, e.run));
          break;
        case 'due':
          this.track(this.deps.ledger.submit([{ kind: 'due', id: e.id }]));
          break;
        case 'end':
          this.track(this.endOf(lane, e));
          break;
        case 'abort':
          this.deps.abort(e.id);
          break;
        case 'ended':
          this.announce(lane, e.run);
          break;
        case 'released':
          for (const resolve of this.waiters.get(e.id) ?? []) resolve();
          this.waiters.delete(e.id);
          break;
        case 'note':
          this.deps.events.emit('info', { msg: e.msg });
          break;
      }
    }
    this.deps.events.emit('lane', { key: lane.key, running: lane.running, queued: lane.queued });
    if (lane.removed && lane.active === 0) this.deps.drop(lane);
  }

  private admitted(lane: Lane, decision: DecisionKind): void {
    if (decision !== 'record') this.deps.events.emit('admitted', { key: lane.key, decision });
  }

  /** Claims a queued run (the ledger's `start`) and tells its lane the answer. */
  private async start(lane: Lane, run: NewRun): Promise<void> {
    const op: LedgerOp = { kind: 'start', id: run.id, startedAt: this.deps.clock.now() };
    const [res] = await this.deps.ledger.submit([op]);
    this.apply(lane, lane.started(run.id, res as LedgerResult));
  }

  private async endOf(lane: Lane, e: Extract<Effect, { kind: 'end' }>): Promise<void> {
    const patch: EndPatch = { outcome: e.outcome, endedAt: this.deps.clock.now(), error: e.reason };
    await this.end(lane, e.run, patch);
    if (e.slot) this.apply(lane, lane.released(e.run.id));
  }

  private async end(lane: Lane | null, run: NewRun, patch: EndPatch): Promise<RunRecord | null> {
    const [res] = await this.deps.ledger.submit([{ kind: 'end', id: run.id, patch }]);
    if (res?.kind !== 'ended') return null;
    this.announce(lane, res.run);
    return res.run;
  }

  private announce(lane: Lane | null, run: RunRecord): void {
    this.deps.events.emit('run-ended', run);
    if (lane)
      this.deps.events.emit('lane', { key: lane.key, running: lane.running, queued: lane.queued });
  }

  private track(p: Promise<unknown>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }
}

/** How a trigger, replay or fire was admitted, as the API says it. */
function admissionName(decision: DecisionKind, run: RunRecord): AdmissionName {
  if (run.outcome === 'duplicate') return 'skipped';
  switch (decision) {
    case 'start':
    case 'replace':
      return 'started';
    case 'queue':
      return 'queued';
    case 'queue_full':
      return 'queue_full';
    default:
      return 'skipped';
  }
}
