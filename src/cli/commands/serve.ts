/** `cronix serve [MANIFEST…]`: runs the daemon until SIGTERM/SIGINT; SIGHUP reloads the manifests. */
import { join, resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import type { Scheduler } from '../../daemon/scheduler.js';
import { parseHost, publicUrlHost } from '../../http/hosts.js';
import { ServeError, startDaemon } from '../../http/serve.js';
import { ssoOptions, type SsoFlags } from './sso-options.js';
import { BatchedLog } from '../../io/batched-log.js';
import { jsonLine, type LineLevel } from '../../io/json-line.js';
import { logFormatOf, prettyDestination } from '../../io/pretty-log.js';
import { systemdNotifier } from '../../io/systemd-notify.js';
import { daemonTracer, traceRuns } from './serve-tracing.js';
import { escapeControls } from '../../io/terminal.js';
import { EXIT } from '../output.js';

/** Options as commander hands them over. */
export interface ServeCliOptions extends SsoFlags {
  dataDir: string;
  listen: string;
  tokenFile?: string;
  auth: boolean;
  publicUrl?: string;
  allowedHost?: string[];
  metricsAuth?: boolean;
  maxEventStreams?: string;
  maxEventStreamsPerClient?: string;
  gracePeriod: string;
  retentionDays: string;
  lockBackend?: string;
  store?: string;
  replicaId?: string;
  leaseSeconds?: string;
  logFormat?: string;
  initLedger?: boolean;
  watch?: string[];
  reportSecretRef?: string[];
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
      : new BatchedLog(pino.destination({ dest: 1, sync: false }));
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
  const access = accessOptions(o);
  if ('error' in access) {
    process.stderr.write(`error: ${access.error}\n`);
    return EXIT.usage;
  }
  const sso = ssoOptions(o);
  if ('error' in sso) {
    process.stderr.write(`error: ${sso.error}\n`);
    return EXIT.usage;
  }
  if (manifests.length === 0 && (o.watch ?? []).length === 0) {
    process.stderr.write(
      'error: give at least one manifest file to fire (cronix serve manifest.json) or to watch (cronix serve --watch manifest.json)\n',
    );
    return EXIT.usage;
  }
  let daemon: Awaited<ReturnType<typeof startDaemon>> | undefined;
  // A signal that comes while the daemon starts is held and handled once it runs (a SIGTERM then
  // stops it at once, a SIGHUP reloads), instead of the default disposition killing it mid-start.
  const held: NodeJS.Signals[] = [];
  const hold = (signal: NodeJS.Signals): void => void held.push(signal);
  const unhold = (): void => {
    for (const s of SIGNALS) process.off(s, hold);
  };
  for (const s of SIGNALS) process.on(s, hold);
  // OpenTelemetry only with OTEL_EXPORTER_OTLP_ENDPOINT: otherwise nothing is loaded
  const tracer = await daemonTracer(process.env);
  // the daemon lost its ledger (taken over, deleted, replaced): it stops and exits 1
  const fatal = { stop: (reason: string): void => void reason };
  try {
    daemon = await startDaemon({
      manifests,
      ...(o.watch ? { watch: o.watch } : {}),
      ...(o.reportSecretRef ? { reportSecretRefs: o.reportSecretRef } : {}),
      dataDir: o.dataDir,
      listen: o.listen,
      ...(o.tokenFile ? { tokenFile: o.tokenFile } : {}),
      ...(o.lockBackend ? { lockBackend: o.lockBackend } : {}),
      ...(o.store ? { store: o.store } : {}),
      ...(o.replicaId ? { replicaId: o.replicaId } : {}),
      leaseSeconds,
      onWaiting: (message) => log.warn({ event: 'store-waiting' }, message),
      onWarning: (message) => log.warn({ event: 'warning' }, message),
      noAuth: !o.auth,
      ...access,
      ...sso,
      retentionDays,
      onEvents: (events) => {
        logEvents(events, log, format === 'pretty' ? null : destination);
        if (tracer !== null) traceRuns(tracer, events, () => daemon?.scheduler.metrics.registry);
      },
      ...(o.initLedger ? { initLedger: true } : {}),
      onFatal: (reason) => fatal.stop(reason),
    });
  } catch (err) {
    unhold();
    if (err instanceof ServeError) {
      destination.flushSync();
      // start-up errors quote manifest keys and values: no control character reaches the terminal
      process.stderr.write(`error: ${escapeControls(err.message, 'lines')}\n`);
      return EXIT.error;
    }
    throw err;
  }
  const { scheduler } = daemon;
  const notifier = systemdNotifier(process.env, (message) =>
    log.warn({ event: 'systemd-notify' }, message),
  );
  const running = daemon;
  const tokenFile =
    running.token === null ? null : resolve(o.tokenFile ?? join(o.dataDir, 'token'));
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string, graceSeconds = grace, code: number = EXIT.ok): void => {
      if (stopping) return;
      stopping = true;
      notifier?.stopping(`stopping (${signal})`);
      log.info(
        { event: 'stopping', signal },
        `stopping (${signal}); letting running attempts finish for up to ${graceSeconds}s`,
      );
      void running.stop(graceSeconds * 1000).then(({ unflushed }) => {
        if (unflushed > 0)
          log.error(
            { event: 'unflushed', writes: unflushed },
            `${unflushed} ledger write(s) could not be made before the grace period ended; their runs' last state is not recorded`,
          );
        log.info({ event: 'stopped' }, 'stopped');
        notifier?.close();
        destination.flushSync();
        void (tracer?.shutdown() ?? Promise.resolve()).then(() =>
          resolve(unflushed > 0 ? EXIT.error : code),
        );
      });
    };
    fatal.stop = (reason) => {
      log.error({ event: 'ledger-lost', err: reason }, `${reason}; stopping at once`);
      stop('ledger lost', 0, EXIT.error);
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGHUP', () => {
      notifier?.reloading();
      void running.reload().then((r) => {
        notifier?.ready(`serving ${scheduler.jobs().size} job(s) on ${running.url}`);
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
    unhold();
    // announced only now that its signal handlers are in place: whoever reads this line (a
    // supervisor, a test, a person) may signal it at once. Where a person goes next: the web
    // UI, and the token it asks for.
    log.info(
      {
        event: 'listening',
        url: running.url,
        ui: `${running.url}/`,
        jobs: scheduler.jobs().size,
        watched: running.watch?.jobs().size ?? 0,
        auth: running.token !== null,
        token_file: tokenFile,
      },
      `cronix serving ${scheduler.jobs().size} job(s) on ${running.url}; web UI ${running.url}/ ${
        tokenFile === null ? '(no login: --no-auth)' : `(log in with the token in ${tokenFile})`
      }`,
    );
    // under systemd Type=notify: ready now that it listens and has scheduled (docs/systemd.md)
    notifier?.ready(`serving ${scheduler.jobs().size} job(s) on ${running.url}`);
    for (const signal of held) process.emit(signal, signal);
  });
}

/** The signals serve handles: stop (SIGTERM, SIGINT) and reload (SIGHUP). */
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** The serve options of access: Host names, `/metrics` auth, event stream caps; or a usage error. */
function accessOptions(o: ServeCliOptions):
  | {
      allowedHosts: string[];
      publicUrl?: string;
      metricsAuth: boolean;
      maxEventStreams: number;
      maxEventStreamsPerClient: number;
    }
  | { error: string } {
  for (const h of o.allowedHost ?? [])
    if (parseHost(h) === null)
      return {
        error: `--allowed-host: expected a host name or address, optionally with :PORT (cron.example.com, 10.0.0.5:7070, [fd00::5]), found ${JSON.stringify(h.slice(0, 200))}`,
      };
  if (o.publicUrl !== undefined) {
    const h = publicUrlHost(o.publicUrl);
    if (typeof h !== 'string') return h;
  }
  const count = (flag: string, text: string | undefined, dflt: number): number | string => {
    if (text === undefined) return dflt;
    const n = Number(text);
    return /^\d{1,7}$/.test(text) && n >= 1
      ? n
      : `${flag}: expected a whole number from 1 to 9999999, found ${JSON.stringify(text.slice(0, 200))}`;
  };
  const max = count('--max-event-streams', o.maxEventStreams, 500);
  const perClient = count('--max-event-streams-per-client', o.maxEventStreamsPerClient, 32);
  if (typeof max === 'string') return { error: max };
  if (typeof perClient === 'string') return { error: perClient };
  return {
    allowedHosts: o.allowedHost ?? [],
    ...(o.publicUrl !== undefined ? { publicUrl: o.publicUrl } : {}),
    metricsAuth: o.metricsAuth === true,
    maxEventStreams: max,
    maxEventStreamsPerClient: perClient,
  };
}

/** Logs the scheduler's events as JSON lines (attached before start-up recovery runs). */
function logEvents(
  events: Scheduler['events'],
  log: Logger,
  destination: { write(line: string): boolean } | null,
): void {
  // the two lines of every run go straight to the JSON destination, as pino would write them
  // (src/io/json-line.ts: a burst of 10,000 runs logs 20,000 of them); pretty output via pino
  const runLine = (level: LineLevel, fields: Record<string, unknown>, msg: string): void => {
    if (!log.isLevelEnabled(level)) return;
    if (destination === null) log[level](fields, msg);
    else destination.write(jsonLine(level, new Date().toISOString(), fields, msg));
  };
  events.on('run-ended', (r) => {
    const fields: Record<string, unknown> = {
      event: 'run-ended',
      app: r.app,
      job: r.job,
      run_id: r.id,
      run_key: r.runKey,
      trigger: r.trigger,
      outcome: r.outcome,
      attempts: r.attempts,
      status: r.lastStatus,
    };
    if (r.error !== null) fields['err'] = r.error;
    runLine(
      r.outcome === 'success' ||
        r.outcome === 'duplicate' ||
        r.outcome === 'skipped' ||
        r.outcome === 'queue_full'
        ? 'info'
        : 'warn',
      fields,
      `${r.app}/${r.job} ${r.outcome}`,
    );
  });
  events.on('run-started', (r) =>
    runLine(
      'info',
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
  events.on('leading', (l) =>
    log.info(
      {
        event: 'leading',
        epoch: l.epoch,
        ...(l.gap
          ? {
              no_leader_from: new Date(l.gap.from).toISOString(),
              no_leader_to: new Date(l.gap.to).toISOString(),
            }
          : {}),
      },
      `leading at epoch ${l.epoch}`,
    ),
  );
  events.on('standing-by', (s) =>
    log.info(
      { event: 'standing-by', leader: s.leader, epoch: s.epoch },
      s.leader === null
        ? 'standing by; no leader yet'
        : `standing by; leader is ${s.leader} at epoch ${s.epoch}` +
            (s.sameReplica
              ? ' (another process of this replica id: waiting for its lease to run out)'
              : ''),
    ),
  );
  events.on('stepped-down', (s) =>
    log.warn(
      { event: 'stepped-down', epoch: s.epoch, reason: s.reason },
      `stepped down from epoch ${s.epoch}: ${s.reason}`,
    ),
  );
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
