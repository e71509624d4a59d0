/** `cronix serve [MANIFEST…]`: runs the daemon until SIGTERM/SIGINT; SIGHUP reloads the manifests. */
import { pino, type Logger } from 'pino';
import type { Scheduler } from '../../daemon/scheduler.js';
import { ServeError, startDaemon } from '../../http/serve.js';
import { logFormatOf, prettyDestination } from '../../io/pretty-log.js';
import { EXIT } from '../output.js';

/** Options as commander hands them over. */
export interface ServeCliOptions {
  dataDir: string;
  listen: string;
  tokenFile?: string;
  auth: boolean;
  gracePeriod: string;
  retentionDays: string;
  lockBackend?: string;
  store?: string;
  replicaId?: string;
  leaseSeconds?: string;
  logFormat?: string;
}

/** Runs the daemon; resolves with the exit code once it has stopped. */
export async function serveCommand(manifests: string[], o: ServeCliOptions): Promise<number> {
  const format = logFormatOf(o.logFormat, process.stdout.isTTY === true);
  if (typeof format === 'object') {
    process.stderr.write(`error: ${format.error}\n`);
    return EXIT.usage;
  }
  // asynchronous writes: a burst of 10,000 run lines must not stall the dispatch of requests;
  // pretty is for a person at a terminal, where that volume does not arise
  const destination =
    format === 'pretty'
      ? prettyDestination(process.stdout, process.stdout.isTTY === true && !process.env['NO_COLOR'])
      : pino.destination({ dest: 1, sync: false });
  const log = pino(
    {
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  const grace = Number(o.gracePeriod);
  if (!Number.isInteger(grace) || grace < 0) {
    process.stderr.write(
      `error: --grace-period: expected whole seconds, found ${JSON.stringify(o.gracePeriod)}\n`,
    );
    return EXIT.usage;
  }
  const retentionDays = Number(o.retentionDays);
  if (!Number.isInteger(retentionDays) || retentionDays < 0) {
    process.stderr.write(
      `error: --retention-days: expected whole days (0 = keep forever), found ${JSON.stringify(o.retentionDays)}\n`,
    );
    return EXIT.usage;
  }
  const leaseSeconds = Number(o.leaseSeconds ?? '15');
  if (!Number.isInteger(leaseSeconds) || leaseSeconds < 3 || leaseSeconds > 600) {
    process.stderr.write(
      `error: --lease-seconds: expected whole seconds from 3 to 600, found ${JSON.stringify(o.leaseSeconds)}\n`,
    );
    return EXIT.usage;
  }
  if (manifests.length === 0) {
    process.stderr.write('error: give at least one manifest file: cronix serve manifest.json\n');
    return EXIT.usage;
  }
  let daemon;
  try {
    daemon = await startDaemon({
      manifests,
      dataDir: o.dataDir,
      listen: o.listen,
      ...(o.tokenFile ? { tokenFile: o.tokenFile } : {}),
      ...(o.lockBackend ? { lockBackend: o.lockBackend } : {}),
      ...(o.store ? { store: o.store } : {}),
      ...(o.replicaId ? { replicaId: o.replicaId } : {}),
      leaseSeconds,
      onWaiting: (message) => log.warn({ event: 'store-waiting' }, message),
      noAuth: !o.auth,
      retentionDays,
      onEvents: (events) => logEvents(events, log),
    });
  } catch (err) {
    if (err instanceof ServeError) {
      destination.flushSync();
      process.stderr.write(`error: ${err.message}\n`);
      return EXIT.error;
    }
    throw err;
  }
  const { scheduler } = daemon;
  log.info(
    {
      event: 'listening',
      url: daemon.url,
      jobs: scheduler.jobs().size,
      auth: daemon.token !== null,
    },
    `cronix serving ${scheduler.jobs().size} job(s) on ${daemon.url}`,
  );

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      log.info(
        { event: 'stopping', signal },
        `stopping (${signal}); letting running attempts finish for up to ${grace}s`,
      );
      void daemon.stop(grace * 1000).then(() => {
        log.info({ event: 'stopped' }, 'stopped');
        destination.flushSync();
        resolve(EXIT.ok);
      });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGHUP', () => {
      void daemon.reload().then((r) => {
        if (r.ok)
          log.info({ event: 'reloaded', jobs: r.jobs }, `manifests reloaded: ${r.jobs} job(s)`);
        else
          for (const e of r.errors)
            log.error(
              { event: 'reload-failed', ...(e.file ? { file: e.file, path: e.path } : {}) },
              `${e.file ? `${e.file}: ${e.path || '(root)'}: ` : ''}${e.message}; keeping the previous manifests`,
            );
      });
    });
  });
}

/** Logs the scheduler's events as JSON lines (attached before start-up recovery runs). */
function logEvents(events: Scheduler['events'], log: Logger): void {
  events.on('run-ended', (r) =>
    log[
      r.outcome === 'success' ||
      r.outcome === 'duplicate' ||
      r.outcome === 'skipped' ||
      r.outcome === 'queue_full'
        ? 'info'
        : 'warn'
    ](
      {
        event: 'run-ended',
        app: r.app,
        job: r.job,
        run_id: r.id,
        run_key: r.runKey,
        trigger: r.trigger,
        outcome: r.outcome,
        attempts: r.attempts,
        status: r.lastStatus,
        ...(r.error !== null ? { err: r.error } : {}),
      },
      `${r.app}/${r.job} ${r.outcome}`,
    ),
  );
  events.on('run-started', (r) =>
    log.info(
      {
        event: 'run-started',
        app: r.app,
        job: r.job,
        run_id: r.id,
        run_key: r.runKey,
        trigger: r.trigger,
      },
      `${r.app}/${r.job} started`,
    ),
  );
  events.on('notification', (n) =>
    log[n.status === 'failed' ? 'warn' : 'info'](
      {
        event: 'notification',
        id: n.id,
        notify_event: n.event,
        app: n.app,
        job: n.job,
        run_id: n.runId,
        notifier: n.notifier,
        status: n.status,
        attempts: n.attempts,
        ...(n.lastStatus !== null ? { http_status: n.lastStatus } : {}),
        ...(n.lastError !== null ? { err: n.lastError } : {}),
      },
      `notification ${n.event} of ${n.app}/${n.job} to ${n.notifier}: ${n.status}`,
    ),
  );
  events.on('warning', (w) => log.warn({ event: 'warning', err: w.err }, w.msg));
  events.on('info', (i) => log.info({ event: 'info' }, i.msg));
  events.on('store-error', (e) =>
    log.error(
      { event: 'store-error', op: e.op, err: e.err, retry_in_ms: e.retryInMs },
      `store ${e.op} failed: ${e.err}; retrying in ${e.retryInMs} ms`,
    ),
  );
  events.on('downtime', (d) =>
    log.warn(
      {
        event: 'downtime',
        job: d.job,
        from: new Date(d.from).toISOString(),
        to: new Date(d.to).toISOString(),
        fires: d.fires,
      },
      `${d.job}: ${d.fires} fire(s) came due while the scheduler was not running; applied the catch-up policy`,
    ),
  );
  events.on('timer-drift', (d) =>
    log.warn(
      {
        event: 'timer-drift',
        expected: new Date(d.expected).toISOString(),
        actual: new Date(d.actual).toISOString(),
      },
      'timer woke off schedule (clock jump or suspended process)',
    ),
  );
}
