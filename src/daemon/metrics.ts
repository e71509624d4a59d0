/**
 * Prometheus metrics of the daemon (SPEC §7), prefix `cronix_`, on a
 * prom-client registry served at `/metrics`. The `job` label is `app/job`.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { JobCounter, JobGauge, JobHistogram, KeyedRows } from './metric-maps.js';
import type { NotificationRecord, RunRecord } from './store/types.js';

const WINDOW_HOURS = 24;
const HOUR = 3_600_000;

/** Numbers per hourly slot: the hour it holds (0: none yet), expected count, succeeded count. */
const SLOT = 3;
/** Numbers per job: {@link WINDOW_HOURS} slots. */
const PER_JOB = WINDOW_HOURS * SLOT;

/**
 * Per-job hourly buckets of expected and succeeded scheduled fires, for the completeness gauge:
 * a row of {@link PER_JOB} numbers per job, all in one growing `Uint32Array` ({@link KeyedRows}).
 */
class Completeness {
  private readonly rows = new KeyedRows(PER_JOB, (n) => new Uint32Array(n));

  private add(key: string, at: number, column: 1 | 2): void {
    const hour = Math.floor(at / HOUR);
    if (hour <= 0) return; // before 1970-01-01T01:00Z: not a time this daemon fires at
    const i = this.rows.row(key) + (hour % WINDOW_HOURS) * SLOT;
    const b = this.rows.data; // after row(): it may have grown the array
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
    const b = this.rows.data;
    const out: [string, number][] = [];
    for (const [key, at] of this.rows.offsets) {
      let expected = 0;
      let ok = 0;
      for (let i = at; i < at + PER_JOB; i += SLOT) {
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
  // per-job metrics: plain maps, rendered at scrape time (metric-maps.ts)
  private readonly dispatch = new JobCounter(
    'cronix_scheduler_dispatch_total',
    'Fires and manual triggers by admission result.',
    this.registry,
    'result',
  );
  private readonly lag = new Histogram({
    name: 'cronix_scheduler_dispatch_lag_seconds',
    help: 'Dispatch time minus scheduled time.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly runs = new JobCounter(
    'cronix_job_run_total',
    'Ended runs by outcome.',
    this.registry,
    'outcome',
  );
  private readonly duration = new JobHistogram(
    'cronix_job_run_duration_seconds',
    'Duration of runs that started attempts.',
    this.registry,
    [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
  );
  private readonly duplicates = new JobCounter(
    'cronix_job_duplicate_suppressed_total',
    'Fires not dispatched because their run key already succeeded.',
    this.registry,
  );
  private readonly outputLost = new JobCounter(
    'cronix_job_output_lost_total',
    'Command runs part of whose output could not be written (a full disk, an I/O error).',
    this.registry,
  );
  private readonly backfill = new JobCounter(
    'cronix_job_backfill_total',
    'Catch-up runs after downtime.',
    this.registry,
  );
  private readonly missed = new JobCounter(
    'cronix_job_missed_total',
    'Fires missed during downtime and not caught up.',
    this.registry,
  );
  private readonly depth = new JobGauge(
    'cronix_job_queue_depth',
    'Runs waiting in the Enqueue queue.',
    this.registry,
  );
  private readonly active = new JobGauge(
    'cronix_job_active_runs',
    'Runs currently running.',
    this.registry,
  );

  private readonly notificationsRecorded = new Counter({
    name: 'cronix_notifications_recorded_total',
    help: 'Notifications recorded for delivery, by notifier and event.',
    labelNames: ['notifier', 'event'],
    registers: [this.registry],
  });
  private readonly notificationsEnded = new Counter({
    name: 'cronix_notifications_ended_total',
    help: 'Notifications whose delivery ended, by notifier, event and status (delivered, failed).',
    labelNames: ['notifier', 'event', 'status'],
    registers: [this.registry],
  });

  private readonly storeErrors = new Counter({
    name: 'cronix_store_errors_total',
    help: 'Failed store writes (each is retried until it succeeds).',
    labelNames: ['op'],
    registers: [this.registry],
  });

  // host mode (SPEC §15)
  private readonly reports = new Counter({
    name: 'cronix_reports_total',
    help: 'Host-mode reports and pings received, by result (recorded, ended, unchanged, refused).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  private readonly skewedReports = new JobCounter(
    'cronix_report_clock_skewed_total',
    "Reports whose host clock was more than 60 s off the server's (flagged on the run).",
    this.registry,
  );
  private readonly hostOffset = new Gauge({
    name: 'cronix_report_host_clock_offset_seconds',
    help: "The server's clock minus the reporting host's, as its last report showed (whole seconds).",
    labelNames: ['host'],
    registers: [this.registry],
  });

  private readonly leader = new Gauge({
    name: 'cronix_leader',
    help: '1 while this daemon leads (dispatches): a cluster leader, or a single daemon; else 0.',
    registers: [this.registry],
  });
  private readonly leaderEpoch = new Gauge({
    name: 'cronix_leader_epoch',
    help: 'The epoch of the lease as this replica last saw it.',
    registers: [this.registry],
  });
  private readonly leaderChanges = new Counter({
    name: 'cronix_leader_changes_total',
    help: 'Times this replica became or stopped being the leader.',
    registers: [this.registry],
  });
  private readonly clockSkew = new Gauge({
    name: 'cronix_clock_skew_seconds',
    help: "The database's clock minus this replica's (positive: the database is ahead).",
    registers: [this.registry],
  });

  constructor(readonly now: () => number) {
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
    this.dispatch.inc(key, result);
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
    this.runs.inc(key, run.outcome);
    if (run.outcome === 'duplicate') this.duplicates.inc(key);
    if (run.outcome === 'missed') this.missed.inc(key);
    if (run.outputLost !== null) this.outputLost.inc(key);
    if (run.startedAt !== null && run.endedAt !== null)
      this.duration.observe(key, (run.endedAt - run.startedAt) / 1000);
    if (
      run.outcome === 'success' &&
      (run.trigger === 'schedule' ||
        run.trigger === 'catchup' ||
        (run.trigger === 'host' && run.scheduleIndex !== null)) &&
      run.endedAt !== null
    ) {
      this.completeness.succeed(key, run.scheduledTime);
    }
  }

  /**
   * A report was received with `result`; for an accepted one, its job, its host, the host's
   * clock offset (server − host, ms) and whether that was flagged (more than 60 s).
   */
  report(
    result: string,
    from?: { key: string; host: string; offsetMs: number; flagged: boolean },
  ): void {
    this.reports.inc({ result });
    if (!from) return;
    this.hostOffset.set({ host: from.host }, Math.round(from.offsetMs / 1000));
    if (from.flagged) this.skewedReports.inc(from.key);
  }

  /** This replica's role changed (high availability). */
  role(leading: boolean, epoch: number | null): void {
    this.leader.set(leading ? 1 : 0);
    if (epoch !== null) this.leaderEpoch.set(epoch);
    this.leaderChanges.inc();
  }

  /** A single daemon (its own store) leads itself: `cronix_leader 1`, no epoch, no change. */
  single(): void {
    this.leader.set(1);
  }

  /** The epoch of the lease as last seen. */
  epochSeen(epoch: number): void {
    this.leaderEpoch.set(epoch);
  }

  /** The measured clock skew against the database, in seconds. */
  skew(seconds: number): void {
    this.clockSkew.set(seconds);
  }

  /**
   * A notification was recorded (its first event, `pending` with no attempt yet) or its
   * delivery ended (`delivered` or `failed`); attempts that leave it pending are not counted.
   */
  notification(n: NotificationRecord): void {
    if (n.status === 'pending') {
      if (n.attempts === 0)
        this.notificationsRecorded.inc({ notifier: n.notifier, event: n.event });
      return;
    }
    this.notificationsEnded.inc({ notifier: n.notifier, event: n.event, status: n.status });
  }

  /** A store write failed (and will be retried). */
  storeError(op: string): void {
    this.storeErrors.inc({ op });
  }

  /** Fires missed during downtime that were counted but not recorded one by one. */
  missedUnrecorded(key: string, n: number): void {
    this.missed.inc(key, '', n);
  }

  /** A catch-up run was created. */
  backfilled(key: string): void {
    this.backfill.inc(key);
  }

  queueDepth(key: string, depth: number): void {
    this.depth.set(key, depth);
  }

  activeRuns(key: string, n: number): void {
    this.active.set(key, n);
  }
}
