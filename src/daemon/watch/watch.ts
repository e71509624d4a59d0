/**
 * Host mode's room (SPEC §15): the watched jobs of `serve --watch` manifests (fired by host
 * schedulers, expected by the daemon, never fired by it), the reports that arrive for them
 * (`receive.ts` judges, `ingest.ts` records in batches) and, while this daemon leads, the
 * detection of what never came (`detector.ts`, on `detect.ts`'s decisions). The runs it records
 * are announced on the daemon's events like the scheduler's, so the live views, the metrics and
 * the notifications (§12, with their grouping) treat them alike.
 */
import type { Manifest } from '../../contract/manifest/types.js';
import type { Clock } from '../../fire/types.js';
import type { DaemonEmitter } from '../events.js';
import type { DaemonMetrics } from '../metrics.js';
import { buildRegistry, type RegisteredJob } from '../registry.js';
import { nextFireOf } from '../schedules.js';
import type { ReportResult, ReportWrite } from '../store/host-types.js';
import type { RunRecord, Store } from '../store/types.js';
import { Detector, type TermLedger } from './detector.js';
import { Ingest } from './ingest.js';
import { receivePing, type PingRequest } from './ping.js';
import { receiveReport, type Refusal } from './receive.js';

/** What the room needs. */
export interface WatchDeps {
  store: Store;
  clock: Clock;
  events: DaemonEmitter;
  metrics: DaemonMetrics;
  /** Report secrets in rotation order (`serve --report-secret-ref`); the first signs. */
  secrets: readonly string[];
}

/** The answer to a report: recorded (or a resend, 200), or refused. */
export type ReportAnswer = { ok: true; result: ReportResult } | { ok: false; refusal: Refusal };

/** See the module comment. */
export class Watch {
  #jobs: ReadonlyMap<string, RegisteredJob> = new Map();
  #apps = new Set<string>();
  /** Open host runs (started, not ended) by `app/job`. */
  readonly #open = new Map<string, Set<string>>();
  readonly #detectors = new Set<Detector>();
  readonly ingest: Ingest;

  constructor(private readonly deps: WatchDeps) {
    this.ingest = new Ingest(deps.store, (w, r) => this.#recorded(w, r));
  }

  /** Installs the watched manifests (start-up and every reload). */
  install(manifests: readonly Manifest[]): void {
    this.#jobs = buildRegistry(manifests, 'host');
    this.#apps = new Set(manifests.map((m) => m.app));
    for (const d of this.#detectors) d.poke();
  }

  /** Reads the open host runs (start-up). */
  async load(): Promise<void> {
    for (const run of await this.deps.store.openHostRuns()) this.#opened(run);
  }

  get secrets(): readonly string[] {
    return this.deps.secrets;
  }

  now(): number {
    return this.deps.clock.now();
  }

  /** Watched jobs by `app/job`. */
  jobs(): ReadonlyMap<string, RegisteredJob> {
    return this.#jobs;
  }

  jobOf(key: string): RegisteredJob | undefined {
    return this.#jobs.get(key);
  }

  watchesApp(app: string): boolean {
    return this.#apps.has(app);
  }

  /** The next expected instant of a watched job, or null. */
  nextExpected(key: string): number | null {
    return nextFireOf(this.#jobs.get(key), this.deps.clock.now());
  }

  /** Host runs of the job started and not ended, as this replica knows them. */
  activeCount(key: string): number {
    return this.#open.get(key)?.size ?? 0;
  }

  /** Judges and records one report (`POST /api/v1/reports`). */
  async report(
    header: string | undefined,
    method: string,
    pathAndQuery: string,
    body: Uint8Array,
  ): Promise<ReportAnswer> {
    const now = this.deps.clock.now();
    const received = receiveReport(
      {
        secrets: this.deps.secrets,
        now,
        jobOf: (k) => this.jobOf(k),
        watchesApp: (a) => this.watchesApp(a),
      },
      header,
      method,
      pathAndQuery,
      body,
    );
    if (!received.ok) {
      this.deps.metrics.report('refused');
      return received;
    }
    return this.record(received.write);
  }

  /** Authenticates and records one ping (`POST /api/v1/ping/...`). */
  async ping(p: PingRequest): Promise<ReportAnswer> {
    const received = await receivePing(
      {
        secrets: this.deps.secrets,
        now: this.deps.clock.now(),
        jobOf: (k) => this.jobOf(k),
        watchesApp: (a) => this.watchesApp(a),
        openRuns: async (app, job) =>
          (await this.deps.store.openHostRuns()).filter((r) => r.app === app && r.job === job),
      },
      p,
    );
    if (!received.ok) {
      this.deps.metrics.report('refused');
      return received;
    }
    return this.record(received.write);
  }

  /** Records a judged report (or ping); a failing store is a 503 the reporter retries. */
  async record(write: ReportWrite): Promise<ReportAnswer> {
    try {
      return { ok: true, result: await this.ingest.submit(write) };
    } catch (err) {
      this.deps.events.emit('store-error', {
        op: 'report',
        err: (err as Error).message,
        retryInMs: 0,
      });
      return {
        ok: false,
        refusal: {
          status: 503,
          code: 'unavailable',
          message: 'the ledger could not record the report; send it again later',
        },
      };
    }
  }

  /**
   * Starts detection for one leader term, writing through `ledger` (the term's, fenced by its
   * epoch); returns what stops it.
   */
  async startTerm(ledger: TermLedger): Promise<() => Promise<void>> {
    const detector = new Detector({
      store: this.deps.store,
      ledger,
      clock: this.deps.clock,
      events: this.deps.events,
      jobs: () => this.#jobs,
    });
    this.#detectors.add(detector);
    await detector.start();
    return async () => {
      this.#detectors.delete(detector);
      await detector.stop();
    };
  }

  #opened(run: RunRecord): void {
    const key = `${run.app}/${run.job}`;
    let set = this.#open.get(key);
    if (!set) this.#open.set(key, (set = new Set()));
    set.add(run.id);
  }

  #closed(run: RunRecord): void {
    this.#open.get(`${run.app}/${run.job}`)?.delete(run.id);
  }

  /** What a durable batch did: metrics, open runs, the daemon's events. */
  #recorded(writes: readonly ReportWrite[], results: ReportResult[]): void {
    const { events, metrics } = this.deps;
    results.forEach((r, i) => {
      const w = writes[i] as ReportWrite;
      const run = w.report.run;
      metrics.report(r.kind, {
        key: `${run.app}/${run.job}`,
        host: run.host,
        offsetMs: w.hostOffsetMs,
        flagged: w.clockSkewMs !== null && r.kind !== 'unchanged',
      });
      if (r.kind === 'unchanged') return;
      if (r.kind === 'recorded') events.emit('run-recorded', r.run);
      if (r.run.phase === 'running') {
        this.#opened(r.run);
        events.emit('run-started', r.run);
      } else {
        this.#closed(r.run);
        events.emit('run-ended', r.run);
      }
    });
    // the end of a run some detector expects moved: let it look again
    if (results.some((r) => r.kind === 'ended')) for (const d of this.#detectors) d.poke();
  }
}
