/**
 * Backfills as the leader runs them (SPEC §16): each running backfill offers the runs of its
 * plan, in order, to its job's lane (`Lane.offer`: a run is decided only when the lane has room,
 * so it counts against `max_concurrent` like any run and is never skipped or queued), at most
 * `parallel` at once. Each run is recorded with its plan item's link in one ledger group, so
 * after a crash the backfill knows exactly which instants it handed out; the run-key claim
 * (§9.4) keeps a key that succeeded from being delivered again, whatever path got there first.
 *
 * Resuming (start-up, a new leader): recovery has ended the runs left active `crashed`; those
 * items and the ones never handed out are run, in order; failed ones count towards the safety
 * gate (`stop_after_failures`), which stops the backfill and says so. Runs in flight when a
 * backfill is stopped or cancelled finish.
 */
import { echo } from '../../contract/echo.js';
import { uuidv7 } from '../../fire/ids.js';
import type { Lane } from '../admission/lane.js';
import { SchedulerError, type SchedulerCore } from '../core.js';
import type {
  BackfillItemSpec,
  BackfillRecord,
  BackfillSpec,
  BackfillState,
} from '../store/backfill-types.js';
import type { RunOutcome, RunRecord } from '../store/types.js';
import { jobKey } from '../registry.js';
import { planBackfill } from './plan.js';

/** Outcomes that count towards a backfill's safety gate (`crashed` runs are run again). */
export const BACKFILL_FAILED: ReadonlySet<RunOutcome> = new Set([
  'app_rejected',
  'retries_exhausted',
  'internal_error',
]);

/** One running backfill. */
class Driver {
  /** Items still to run, in order, and how many of them were handed out. */
  private cursor = 0;
  /** Its runs in flight: run id → plan position. */
  readonly inflight = new Map<string, number>();
  ending = false;

  constructor(
    readonly id: string,
    readonly spec: BackfillSpec,
    private readonly pending: BackfillItemSpec[],
    public failures: number,
  ) {}

  get key(): string {
    return jobKey(this.spec.app, this.spec.job);
  }

  /** The next item to hand out, if any. */
  peek(): BackfillItemSpec | undefined {
    return this.pending[this.cursor];
  }

  advance(): void {
    this.cursor += 1;
  }

  get exhausted(): boolean {
    return this.cursor >= this.pending.length;
  }
}

/** The backfills of one scheduler (one leader term). */
export class Backfills {
  private readonly drivers = new Map<string, Driver>();
  private readonly byRun = new Map<string, Driver>();
  private readonly off: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly core: SchedulerCore) {}

  /** Resumes every backfill left `running` in the store, and follows the runs' ends. */
  async start(): Promise<void> {
    const { events } = this.core;
    const ended = (run: RunRecord): void => this.ended(run);
    const lane = (info: { key: string }): void => {
      for (const d of this.drivers.values()) if (d.key === info.key) this.pump(d);
    };
    events.on('run-ended', ended);
    events.on('lane', lane);
    this.off.push(
      () => events.off('run-ended', ended),
      () => events.off('lane', lane),
    );
    const { store } = this.core.deps;
    for (const b of await store.listBackfills({ state: 'running', limit: 1000 })) {
      const items = await store.backfillItems(b.id);
      const pending = items.filter((i) => i.runId === null || i.outcome === 'crashed');
      const failures = items.filter((i) => i.outcome && BACKFILL_FAILED.has(i.outcome)).length;
      const d = new Driver(b.id, b, pending, failures);
      this.drivers.set(b.id, d);
      this.pump(d);
    }
  }

  /** Stops handing out runs (shutdown); runs in flight finish, the backfills stay `running`. */
  stop(): void {
    this.stopped = true;
    for (const f of this.off.splice(0)) f();
  }

  /** Creates a backfill of `spec` (its plan fixed now) and starts it. */
  async create(spec: BackfillSpec, by: string): Promise<BackfillRecord> {
    const key = jobKey(spec.app, spec.job);
    const lane = this.core.lane(key);
    if (!lane) throw new SchedulerError('not_found', `no job ${echo(key)}`);
    if (this.stopped || this.core.isStopping)
      throw new SchedulerError(
        'unavailable',
        'the daemon is shutting down; try again after it restarts',
      );
    const plan = await planBackfill(this.core.deps.store, lane.job, spec);
    if (!plan.ok) throw new SchedulerError('invalid_request', plan.message);
    const now = this.core.deps.clock.now();
    const id = uuidv7(now);
    const [res] = await this.core.ledger.submit([
      {
        kind: 'backfill-create',
        backfill: { ...spec, id, createdBy: by, createdAt: now },
        items: plan.items,
      },
    ]);
    if (res?.kind !== 'ok')
      throw new SchedulerError('unavailable', 'the backfill was not recorded');
    this.core.events.emit('info', {
      msg: `${key}: backfill ${id} of ${plan.items.length} instant(s) started by ${by}`,
    });
    const d = new Driver(id, spec, plan.items, 0);
    this.drivers.set(id, d);
    this.pump(d);
    return this.record(id);
  }

  /** Cancels a running backfill: nothing more is handed out; its runs in flight finish. */
  async cancel(id: string, by: string): Promise<BackfillRecord> {
    const d = this.drivers.get(id);
    if (!d) {
      const b = await this.core.deps.store.getBackfill(id);
      if (!b) throw new SchedulerError('not_found', `no backfill ${echo(id)}`);
      throw new SchedulerError('conflict', `backfill ${id} already ended (${b.state})`);
    }
    await this.end(d, 'cancelled', `cancelled by ${by}`);
    return this.record(id);
  }

  private async record(id: string): Promise<BackfillRecord> {
    const b = await this.core.deps.store.getBackfill(id);
    if (!b) throw new Error(`backfill ${id} is not in the store`);
    return b;
  }

  private ended(run: RunRecord): void {
    const d = this.byRun.get(run.id);
    if (!d) return;
    this.byRun.delete(run.id);
    d.inflight.delete(run.id);
    if (run.outcome && BACKFILL_FAILED.has(run.outcome)) d.failures += 1;
    this.pump(d);
  }

  /** Hands out what the backfill may now; ends it when its plan is through or its gate closed. */
  private pump(d: Driver): void {
    if (d.ending || this.stopped || this.core.isStopping) return;
    const gate = d.spec.stopAfterFailures;
    if (gate !== null && d.failures >= gate) {
      void this.end(
        d,
        'stopped',
        `stopped after ${d.failures} failed run(s) (stop_after_failures ${gate})`,
      );
      return;
    }
    const lane = this.core.lane(d.key);
    if (!lane) {
      void this.end(d, 'stopped', `job ${d.key} is no longer in the manifests`);
      return;
    }
    while (d.inflight.size < d.spec.parallel) {
      const item = d.peek();
      if (!item) break;
      if (!this.offer(d, lane, item)) break;
    }
    if (d.exhausted && d.inflight.size === 0) void this.end(d, 'done', null);
  }

  /** Offers one item's run to the lane; false: no room now (the lane's next release retries). */
  private offer(d: Driver, lane: Lane, item: BackfillItemSpec): boolean {
    const run = {
      ...this.core.newRun(lane.job, item.scheduleIndex, item.scheduledTime, 'backfill'),
      runKey: item.runKey,
    };
    const ticket = lane.offer(run, this.core.deps.clock.now());
    if (!ticket) return false;
    d.advance();
    d.inflight.set(run.id, item.position);
    this.byRun.set(run.id, d);
    void this.core.pipeline.record(
      [{ lane, ticket }],
      [{ kind: 'backfill-link', backfillId: d.id, position: item.position, runId: run.id }],
    );
    return true;
  }

  private async end(d: Driver, state: Exclude<BackfillState, 'running'>, reason: string | null) {
    if (d.ending) return;
    d.ending = true;
    this.drivers.delete(d.id);
    const endedAt = this.core.deps.clock.now();
    await this.core.ledger.submit([{ kind: 'backfill-end', id: d.id, state, reason, endedAt }]);
    this.core.events.emit('info', {
      msg: `${d.key}: backfill ${d.id} ${state}${reason ? `: ${reason}` : ''}`,
    });
  }
}
