/**
 * Prometheus metrics of the daemon (SPEC §7), prefix `cronix_`, on a
 * prom-client registry served at `/metrics`. The `job` label is `app/job`.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RunRecord } from './store/types.js';

const WINDOW_HOURS = 24;
const HOUR = 3_600_000;

/** Per-job hourly buckets of expected and succeeded scheduled fires, for the completeness gauge. */
class Completeness {
  /** Per job: for each of 24 slots, the hour it holds, expected count, succeeded count. */
  private readonly jobs = new Map<string, Float64Array>();

  private add(key: string, at: number, column: 1 | 2): void {
    let b = this.jobs.get(key);
    if (!b) {
      b = new Float64Array(WINDOW_HOURS * 3).fill(-1);
      this.jobs.set(key, b);
    }
    const hour = Math.floor(at / HOUR);
    const i = (hour % WINDOW_HOURS) * 3;
    if (b[i] !== hour) {
      if ((b[i] as number) > hour) return; // older than the slot's hour: outside the window
      b[i] = hour;
      b[i + 1] = 0;
      b[i + 2] = 0;
    }
    b[i + column] = (b[i + column] as number) + 1;
  }

  expect(key: string, nominal: number): void {
    this.add(key, nominal, 1);
  }

  succeed(key: string, nominal: number): void {
    this.add(key, nominal, 2);
  }

  /** succeeded ÷ expected over the last 24 hours, per job with expected fires. */
  ratios(now: number): [string, number][] {
    const newest = Math.floor(now / HOUR);
    const out: [string, number][] = [];
    for (const [key, b] of this.jobs) {
      let expected = 0;
      let ok = 0;
      for (let i = 0; i < b.length; i += 3) {
        if ((b[i] as number) > newest - WINDOW_HOURS) {
          expected += b[i + 1] as number;
          ok += b[i + 2] as number;
        }
      }
      if (expected > 0) out.push([key, Math.min(1, ok / expected)]);
    }
    return out;
  }
}

/** The daemon's metrics. */
export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly completeness = new Completeness();
  private readonly dispatch = new Counter({
    name: 'cronix_scheduler_dispatch_total',
    help: 'Fires and manual triggers by admission result.',
    labelNames: ['job', 'result'],
    registers: [this.registry],
  });
  private readonly lag = new Histogram({
    name: 'cronix_scheduler_dispatch_lag_seconds',
    help: 'Dispatch time minus scheduled time.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly runs = new Counter({
    name: 'cronix_job_run_total',
    help: 'Ended runs by outcome.',
    labelNames: ['job', 'outcome'],
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'cronix_job_run_duration_seconds',
    help: 'Duration of runs that started attempts.',
    labelNames: ['job'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
    registers: [this.registry],
  });
  private readonly duplicates = new Counter({
    name: 'cronix_job_duplicate_suppressed_total',
    help: 'Fires not dispatched because their run key already succeeded.',
    labelNames: ['job'],
    registers: [this.registry],
  });
  private readonly backfill = new Counter({
    name: 'cronix_job_backfill_total',
    help: 'Catch-up runs after downtime.',
    labelNames: ['job'],
    registers: [this.registry],
  });
  private readonly missed = new Counter({
    name: 'cronix_job_missed_total',
    help: 'Fires missed during downtime and not caught up.',
    labelNames: ['job'],
    registers: [this.registry],
  });
  private readonly depth = new Gauge({
    name: 'cronix_job_queue_depth',
    help: 'Runs waiting in the Enqueue queue.',
    labelNames: ['job'],
    registers: [this.registry],
  });
  private readonly active = new Gauge({
    name: 'cronix_job_active_runs',
    help: 'Runs currently running.',
    labelNames: ['job'],
    registers: [this.registry],
  });

  constructor(now: () => number) {
    const completeness = this.completeness;
    new Gauge({
      name: 'cronix_run_completeness',
      help: 'Succeeded scheduled runs ÷ expected scheduled fires over the last 24 h.',
      labelNames: ['job'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [job, ratio] of completeness.ratios(now())) this.set({ job }, ratio);
      },
    });
  }

  /** A fire or trigger was admitted with `result`. */
  dispatched(key: string, result: string): void {
    this.dispatch.inc({ job: key, result });
  }

  /** Dispatch lag of a started run. */
  dispatchLag(seconds: number): void {
    this.lag.observe(Math.max(0, seconds));
  }

  /** A scheduled fire happened (expected), for completeness. */
  expected(key: string, nominal: number): void {
    this.completeness.expect(key, nominal);
  }

  /** A run was recorded with a terminal outcome. */
  runEnded(key: string, run: RunRecord): void {
    if (run.outcome === null) return;
    this.runs.inc({ job: key, outcome: run.outcome });
    if (run.outcome === 'duplicate') this.duplicates.inc({ job: key });
    if (run.outcome === 'missed') this.missed.inc({ job: key });
    if (run.startedAt !== null && run.endedAt !== null)
      this.duration.observe({ job: key }, (run.endedAt - run.startedAt) / 1000);
    if (
      run.outcome === 'success' &&
      (run.trigger === 'schedule' || run.trigger === 'catchup') &&
      run.endedAt !== null
    ) {
      this.completeness.succeed(key, run.scheduledTime);
    }
  }

  /** A catch-up run was created. */
  backfilled(key: string): void {
    this.backfill.inc({ job: key });
  }

  queueDepth(key: string, depth: number): void {
    this.depth.set({ job: key }, depth);
  }

  activeRuns(key: string, n: number): void {
    this.active.set({ job: key }, n);
  }
}
