/**
 * A daemon with watched jobs as its API sees it (SPEC §15): the scheduler's (or the cluster
 * replica's) control with the watched jobs beside the fired ones. A watched job is listed with
 * `firedBy: 'host'`, its next expected instant as its next fire and its open host runs as its
 * active ones; the verbs refuse it (a host scheduler fires it, not this daemon). Everything else
 * is the inner control's.
 */
import type { ClusterView, DaemonControl, DaemonRole, StoreHealth } from '../control.js';
import { SchedulerError, type TriggerOptions, type TriggerResult } from '../core.js';
import type { DaemonEmitter } from '../events.js';
import type { DaemonMetrics } from '../metrics.js';
import type { RegisteredJob } from '../registry.js';
import type { BackfillRecord, BackfillSpec, RunRecord } from '../store/types.js';
import type { FreezeRecord, FreezeSpec, PauseNote } from '../store/freeze-types.js';
import type { SkipRecord } from '../store/skip-types.js';
import type { SkipResult, SkipWhat } from '../verbs.js';
import type { Watch } from './watch.js';

function refuse(key: string, verb: string): never {
  throw new SchedulerError(
    'conflict',
    `job ${key} is watched (serve --watch): its host scheduler fires it, so this daemon does not ${verb} it`,
  );
}

/** See the module comment. */
export class WatchedControl implements DaemonControl {
  #merged: Map<string, RegisteredJob> | null = null;
  #fired: ReadonlyMap<string, RegisteredJob> | null = null;
  #watched: ReadonlyMap<string, RegisteredJob> | null = null;

  constructor(
    readonly inner: DaemonControl,
    readonly watch: Watch,
  ) {
    if (inner.cluster) this.cluster = () => (inner.cluster as () => Promise<ClusterView>)();
    if (inner.role) this.role = () => (inner.role as () => DaemonRole)();
    if (inner.storeHealth) this.storeHealth = () => (inner.storeHealth as () => StoreHealth)();
    // supervised services (SPEC §17) are the inner daemon's; watched manifests have none
    if (inner.serviceViews) this.serviceViews = () => inner.serviceViews!();
    if (inner.serviceAction) this.serviceAction = (...a) => inner.serviceAction!(...a);
  }

  cluster?(): Promise<ClusterView>;
  role?(): DaemonRole;
  storeHealth?(): StoreHealth;
  serviceViews?: DaemonControl['serviceViews'];
  serviceAction?: DaemonControl['serviceAction'];

  get events(): DaemonEmitter {
    return this.inner.events;
  }

  get metrics(): DaemonMetrics {
    return this.inner.metrics;
  }

  get isStopping(): boolean {
    return this.inner.isStopping;
  }

  now(): number {
    return this.inner.now();
  }

  /** The fired jobs and the watched ones (an app is one or the other), by `app/job`. */
  jobs(): ReadonlyMap<string, RegisteredJob> {
    const fired = this.inner.jobs();
    const watched = this.watch.jobs();
    if (this.#merged === null || fired !== this.#fired || watched !== this.#watched) {
      this.#merged = new Map([...fired, ...watched]);
      this.#fired = fired;
      this.#watched = watched;
    }
    return this.#merged;
  }

  #watchedJob(key: string): boolean {
    return this.watch.jobOf(key) !== undefined;
  }

  nextFireOf(key: string): number | null {
    return this.#watchedJob(key) ? this.watch.nextExpected(key) : this.inner.nextFireOf(key);
  }

  isPaused(key: string): boolean {
    return this.#watchedJob(key) ? false : this.inner.isPaused(key);
  }

  activeCount(key: string): number {
    return this.#watchedJob(key) ? this.watch.activeCount(key) : this.inner.activeCount(key);
  }

  queueLength(key: string): number {
    return this.#watchedJob(key) ? 0 : this.inner.queueLength(key);
  }

  trigger(
    app: string,
    job: string,
    when?: { at?: number; afterSeconds?: number },
    opts?: TriggerOptions,
  ): Promise<TriggerResult> {
    const key = `${app}/${job}`;
    if (this.#watchedJob(key)) refuse(key, 'trigger');
    return this.inner.trigger(app, job, when, opts);
  }

  cancel(runId: string): Promise<RunRecord> {
    return this.inner.cancel(runId);
  }

  replay(runId: string): Promise<TriggerResult> {
    return this.inner.replay(runId);
  }

  setPaused(
    app: string,
    job: string,
    paused: boolean,
    note?: { reason: string | null; by: string },
  ): Promise<void> {
    const key = `${app}/${job}`;
    if (this.#watchedJob(key)) refuse(key, paused ? 'pause' : 'resume');
    return this.inner.setPaused(app, job, paused, note);
  }

  pauseNote(key: string): PauseNote | null {
    return this.inner.pauseNote?.(key) ?? null;
  }

  waitingFor(runId: string): string | null {
    return this.inner.waitingFor?.(runId) ?? null;
  }

  skip(app: string, job: string, what: SkipWhat, by: string): Promise<SkipResult> {
    const key = `${app}/${job}`;
    if (this.#watchedJob(key)) refuse(key, 'skip');
    if (!this.inner.skip) throw new SchedulerError('not_found', 'skips are not supported');
    return this.inner.skip(app, job, what, by);
  }

  skipsOf(key: string): SkipRecord[] {
    return this.inner.skipsOf?.(key) ?? [];
  }

  freeze(spec: FreezeSpec, by: string): Promise<FreezeRecord> {
    if (!this.inner.freeze) throw new SchedulerError('not_found', 'freezes are not supported');
    return this.inner.freeze(spec, by);
  }

  unfreeze(app: string | null, job: string | null, by: string): Promise<FreezeRecord> {
    if (!this.inner.unfreeze) throw new SchedulerError('not_found', 'freezes are not supported');
    return this.inner.unfreeze(app, job, by);
  }

  freezeList(): Promise<FreezeRecord[]> {
    return this.inner.freezeList?.() ?? Promise.resolve([]);
  }

  backfill(spec: BackfillSpec, by: string): Promise<BackfillRecord> {
    const key = `${spec.app}/${spec.job}`;
    if (this.#watchedJob(key)) refuse(key, 'backfill');
    return this.inner.backfill(spec, by);
  }

  cancelBackfill(id: string, by: string): Promise<BackfillRecord> {
    return this.inner.cancelBackfill(id, by);
  }
}
