/**
 * The daemon's scheduler (SPEC §7, §9): its life cycle (start, install, reload,
 * stop). Its rooms are built and wired by `scheduler-rooms.ts` and held, with the
 * views and verbs the API asks for, by `scheduler-base.ts`; each turn of the
 * timer goes to them:
 *
 *   timer (`timer.ts`) ─ fires ahead ─→ plan-ahead (`plan-ahead.ts`)
 *                      ─ fires due  ─→ the job's lane decides (`admission/lane.ts`)
 *   → the pipeline records and carries out (`pipeline.ts`)
 *   → the execution room runs it (`execution.ts`) → its end → the lane releases.
 *
 * Start-up recovery and catch-up live in `recovery.ts`, the API's verbs in
 * `verbs.ts`, the schedules' instants and checkpoints in `schedules.ts`,
 * retention in `retention.ts`; metrics and notifications listen to the events
 * (`observers.ts`).
 */
import { attemptStopSeconds } from '../contract/manifest/effective.js';
import type { Manifest } from '../contract/manifest/types.js';
import { recover } from './recovery.js';
import { buildRegistry, type RegisteredJob } from './registry.js';
import { SchedulerBase } from './scheduler-base.js';
import type { LedgerOp } from './store/types.js';
import { within } from './within.js';

export { SchedulerError, type TriggerResult } from './core.js';
export { PLAN_AHEAD_MS, type SchedulerDeps } from './scheduler-deps.js';

/** After the grace period, how long runs get to end while the store fails (SPEC §9 item 6). */
const STOP_FAILING_MS = 3000;

/** The scheduler. Create, `start(manifests)`, then `stop()`. */
export class Scheduler extends SchedulerBase {
  private stopWatch: (() => Promise<void>) | null = null;

  // ---- life cycle ----

  /** Recovers the ledger, catches up, and starts the loop (see `recovery.ts`). */
  async start(manifests: readonly Manifest[]): Promise<void> {
    await recover(this, manifests);
    await this.backfills.start();
    this.notifications?.start();
    // after recovery: a crashed daemon's instances are stopped and ended before new ones start
    this.services?.start(manifests);
    this.events.emit('reloaded', { jobs: this.jobLanes.registry.size });
    this.timer.start();
    // host mode: what never came is detected while this scheduler leads, through its ledger
    if (this.deps.watch) this.stopWatch = await this.deps.watch.startTerm(this.ledger);
  }

  /**
   * Installs a registry: lanes for new jobs, the new definition for kept ones; a removed job's
   * queued and delayed runs end `stopped` (`job removed`), its running runs finish. Returns the
   * writes of those ends.
   */
  install(
    registry: Map<string, RegisteredJob>,
    paused: ReadonlySet<string> = new Set(),
  ): Promise<unknown>[] {
    this.schedules.generation += 1;
    const work: Promise<unknown>[] = [];
    for (const lane of this.jobLanes.install(registry, paused)) {
      this.pipeline.apply(lane, lane.remove());
      for (const run of this.delayed.takeJob(lane.key))
        work.push(this.pipeline.endUnstarted(lane, run, 'job removed'));
    }
    return work;
  }

  /** Replaces the manifests; running runs continue, removed jobs' queues end `stopped`. */
  async reload(manifests: readonly Manifest[]): Promise<void> {
    const now = this.deps.clock.now();
    const work = this.install(buildRegistry(manifests));
    this.freezes.apply(now, false); // a new job inside a frozen scope is frozen too
    this.timer.removeWhere((item) => item.kind === 'fire');
    const firstSeen: LedgerOp[] = [];
    for (const lane of this.jobLanes.all())
      if (!lane.removed) firstSeen.push(...this.schedules.startNew(lane, now, true));
    // a new schedule's checkpoint, in groups (10,000 new jobs are not 10,000 writes)
    work.push(this.ledger.submitIndependent(firstSeen));
    await Promise.all(work);
    await this.services?.reload(manifests);
    this.events.emit('reloaded', { jobs: this.jobLanes.registry.size });
  }

  /** Stops scheduling, lets launched runs finish up to `graceMs`, then stops them; queues stay. */
  async stop(graceMs = 30_000): Promise<{ unflushed: number }> {
    this.stopping = true;
    this.pipeline.stopping = true;
    const stopWatch = this.stopWatch;
    this.stopWatch = null;
    this.backfills.stop();
    const deadline = Date.now() + graceMs;
    await within(stopWatch?.() ?? Promise.resolve(), graceMs);
    const left = (): number => Math.max(0, deadline - Date.now());
    // services stop alongside the runs: each instance with its graceful stop (a term that ended,
    // grace 0, kills them at once); their ends are written before the ledger gives up
    const services = this.services?.stop(graceMs === 0) ?? Promise.resolve();
    await within(this.timer.stop(), left());
    // runs planned ahead whose instant has not come: taken back for the next daemon
    await within(this.planAhead.withdraw(this.jobLanes.all()), left());
    if ((await within(this.settled(), left())) === 'timeout') {
      let stopMs = 0; // command jobs: their process groups get their graceful stop
      for (const lane of this.jobLanes.all()) {
        this.pipeline.apply(lane, lane.stopAll('daemon shutting down'));
        stopMs = Math.max(stopMs, attemptStopSeconds(lane.job.job) * 1000);
      }
      // a failing store would hold the ends of those runs forever: a few seconds, no more
      const failing = this.ledger.health() !== null;
      await within(this.settled(), failing ? STOP_FAILING_MS : 10_000 + stopMs);
    }
    await services;
    if (this.ledger.health() === null) await within(this.ledger.idle(), 10_000);
    // what is still not written is given up and counted (SPEC §9 item 6)
    const unflushed = this.ledger.abandon();
    await within(this.notifications?.stop() ?? Promise.resolve(), 2000);
    for (const off of this.detach.splice(0)) off();
    return { unflushed };
  }

  private async settled(): Promise<void> {
    do {
      await this.execution.settled();
      await this.pipeline.settled();
      await this.ledger.idle();
    } while (this.execution.active > 0 || this.pipeline.busy);
  }
}
