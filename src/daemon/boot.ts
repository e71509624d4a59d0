/**
 * The daemon's composition root (SPEC §9 item 2): it takes the data dir, loads
 * the manifests, reads or creates the API token, opens the store and builds the
 * scheduler (one `Scheduler` on SQLite, a `Cluster` replica on PostgreSQL);
 * {@link BootedDaemon.start} then resolves every job's secrets, the notifiers
 * and the lock backend and only then schedules. The HTTP layer binds its
 * address between the two steps (`src/http/serve.ts`), so a daemon that cannot
 * listen fires nothing. A failure at any step throws a {@link ServeError}
 * naming the cause, having fired nothing, and undoes what was taken.
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Manifest } from '../contract/manifest/types.js';
import { systemClock } from '../fire/clock.js';
import { inheritedEnv } from '../fire/command-attempt.js';
import { createCommandRunner } from '../fire/command-runner.js';
import { createUndiciTransport, keepWasmOnBaseline } from '../fire/undici-transport.js';
import type { Clock, CommandRunner, Transport } from '../fire/types.js';
import { hostIdentity } from '../locks/host.js';
import type { ResolvedNotifier } from '../notify/resolve.js';
import type { SmtpTarget } from '../notify/smtp.js';
import type { Cluster } from './cluster/replica.js';
import type { DaemonControl } from './control.js';
import { loadToken, lockDataDir, narrowLedger, prepareDataDir, ServeError } from './data-dir.js';
import { resolveAllNotifiers } from './boot-manifests.js';
import { loadServedAndWatched, reportSecrets } from './watch/boot.js';
import { WatchedControl } from './watch/control.js';
import { Watch } from './watch/watch.js';
import {
  globalScopeJobs,
  locateProblems,
  missingLockBackend,
  type BootProblem,
  type ProblemKind,
} from './boot-problems.js';
import { DaemonEmitter } from './events.js';
import { GlobalLocks, globalScopeProblems, needsGlobalLocks } from './global-locks.js';
import { resolveJobSecrets } from './job-secrets.js';
import { DaemonMetrics } from './metrics.js';
import { RunLogs } from './run-logs.js';
import { resolveServiceSecrets } from './services/secrets.js';
import { Scheduler, type SchedulerDeps } from './scheduler.js';
import { claimLedger, isOwned, type Ownership } from './ownership.js';
import { LEDGER_ID_FILE, openPgStore, openSqliteLedger, StoreOpenError } from './store/open.js';
import type { PostgresStore } from './store/postgres.js';
import type { Store } from './store/types.js';

/** Options of {@link bootDaemon}. */
export interface BootOptions {
  manifests: string[];
  /** `--watch`: manifests (files or directories) of jobs fired by host schedulers (SPEC §15). */
  watch?: string[];
  /** `--report-secret-ref`: the secrets reports and pings are signed with, in rotation order. */
  reportSecretRefs?: string[];
  dataDir: string;
  tokenFile?: string;
  noAuth?: boolean;
  /** Days to keep ended runs; 0 = forever. Default 30. */
  retentionDays?: number;
  clock?: Clock;
  transport?: Transport;
  /** Runs command jobs; default the real runner (process groups, `<data-dir>/logs`). */
  commandRunner?: CommandRunner;
  env?: NodeJS.ProcessEnv;
  /**
   * `postgres://user@host:5432/db?schema=NAME`: a PostgreSQL store shared by
   * replicas (high availability); default `$CRONIX_STORE_URL`, else SQLite.
   */
  store?: string;
  /** This replica's name in a cluster; default `<host>:<pid>`. */
  replicaId?: string;
  /** Leader lease TTL in seconds; default 15. */
  leaseSeconds?: number;
  /** Told while the PostgreSQL store cannot be reached at start-up (it is retried). */
  onWaiting?: (message: string) => void;
  /** `redis://…` lock backend of global-scope jobs; default `$CRONIX_REDIS_URL`. */
  lockBackend?: string;
  /** Opens the store; default SQLite in the data dir. */
  openStore?: (dataDir: string) => Promise<Store>;
  /**
   * Called with the scheduler's events as soon as they exist, before start-up recovery, so what
   * recovery reports (runs ended crashed, leftover processes stopped) reaches the log.
   */
  onEvents?: (events: DaemonEmitter) => void;
  /** Extra TLS options of SMTP notifiers' connections (a private CA). */
  smtpTls?: SmtpTarget['tls'];
  /**
   * Told what start-up repaired or could not (a data dir open to others that this user does
   * not own, a token file left empty by a crash and generated anew); default: nothing.
   */
  onWarning?: (message: string) => void;
  /**
   * Start an empty ledger where the data dir had one that is now missing, empty or replaced
   * (`serve --init-ledger`); without it such a data dir is refused.
   */
  initLedger?: boolean;
  /**
   * The daemon can go on no longer (its ledger was taken over, deleted or replaced): it has
   * stopped dispatching; the caller stops it and exits non-zero.
   */
  onFatal?: (reason: string) => void;
}

export { loadManifests } from './boot-manifests.js';

export { dataDirProblem, ServeError } from './data-dir.js';

/**
 * The outcome of a reload: the new job count, or every error (the old set keeps running), each
 * with the manifest file and path it comes from when it comes from one.
 */
export type ReloadResult = { ok: true; jobs: number } | { ok: false; errors: BootProblem[] };

/** A daemon whose store is open and whose scheduler is built, not yet scheduling. */
export interface BootedDaemon {
  dataDir: string;
  token: string | null;
  store: Store;
  logs: RunLogs;
  /** The scheduler, or this replica of a cluster (with the watched jobs beside, SPEC §15). */
  control: DaemonControl;
  /** Host mode (`--watch`): the watched jobs and their reports; null without `--watch`. */
  watch: Watch | null;
  /** Resolves secrets, notifiers and locks, then schedules (recovery, catch-up, the loop). */
  start(): Promise<void>;
  /** Reloads the manifest files; on any error keeps the old set and returns the errors. */
  reload(): Promise<ReloadResult>;
  /**
   * Stops scheduling (runs get `graceMs`), then closes the store and frees the data dir; says
   * how many ledger writes could not be made (a failing store).
   */
  stop(graceMs?: number): Promise<{ unflushed: number }>;
  /** Undoes a boot that did not start (a failed listen): closes what was opened. */
  abort(): Promise<void>;
}

/**
 * The daemon's HTTP transport: undici, at most 256 connections per origin, its response parser
 * kept on the baseline compiler (set before its first connection compiles it).
 */
function daemonTransport(): Transport {
  keepWasmOnBaseline();
  return createUndiciTransport({ maxSockets: 256 });
}

/** Connects the global lock backend, or explains why it cannot (naming the jobs that need it). */
async function openGlobalLocks(
  url: string | undefined,
  env: NodeJS.ProcessEnv,
  clock: Clock,
  manifests: readonly Manifest[],
): Promise<GlobalLocks> {
  if (!url) throw new ServeError(missingLockBackend(manifests));
  const prefix = env['CRONIX_REDIS_PREFIX'] ?? 'cronix:';
  const { RedisBackend } = await import('../locks/redis.js');
  const locks = new GlobalLocks(() => RedisBackend.connect(url, { prefix }), clock, {
    pid: process.pid,
    host: hostIdentity(),
  });
  try {
    await locks.open();
  } catch (err) {
    throw new ServeError(`lock backend: ${(err as Error).message}`);
  }
  return locks;
}

/** Opens the store the options name, with its problems as {@link ServeError}s. */
async function openStore(
  opts: BootOptions,
  dataDir: string,
  url: string | undefined,
  traces: readonly string[],
): Promise<{ store: Store; pg: PostgresStore | null }> {
  try {
    if (url !== undefined && url !== '') {
      const pg = await openPgStore(url, opts.onWaiting);
      return { store: pg, pg };
    }
    const open =
      opts.openStore ??
      ((d: string) => openSqliteLedger(d, { ...(opts.initLedger ? { init: true } : {}), traces }));
    return { store: await open(dataDir), pg: null };
  } catch (err) {
    if (err instanceof StoreOpenError) throw new ServeError(err.message);
    throw new ServeError(`cannot open the ledger in ${dataDir}: ${(err as Error).message}`);
  }
}

/**
 * Takes the data dir, loads the manifests, reads the token, opens the store and builds the
 * scheduler; nothing is scheduled until {@link BootedDaemon.start}.
 */
export async function bootDaemon(opts: BootOptions): Promise<BootedDaemon> {
  const dataDir = resolve(opts.dataDir);
  prepareDataDir(dataDir, opts.onWarning);
  const dirLock = await lockDataDir(dataDir);
  const undo: (() => Promise<void>)[] = [() => dirLock.release()];
  const unwind = async (): Promise<void> => {
    for (const step of undo.splice(0)) await step().catch(() => undefined);
  };
  try {
    const loaded = await loadServedAndWatched(opts.manifests, opts.watch ?? []);
    if (loaded.errors.length > 0) {
      throw new ServeError(
        loaded.errors
          .map((e) => `${e.file}: ${e.path === '' ? '(root)' : e.path}: ${e.message}`)
          .join('\n'),
      );
    }
    // what this data dir held before this start: a ledger gone from one of those is refused (an
    // empty token is a first start cut short, not a sign of a ledger)
    const traces = [LEDGER_ID_FILE, ...(opts.tokenFile ? [] : ['token'])].filter(
      (f) => (sizeOf(join(dataDir, f)) ?? 0) > 0,
    );
    const token = opts.noAuth ? null : loadToken(opts.tokenFile, dataDir, opts.onWarning);
    const env = opts.env ?? process.env;
    const url = opts.store ?? env['CRONIX_STORE_URL'];
    const { store, pg } = await openStore(opts, dataDir, url, traces);
    undo.unshift(() => store.close());
    if (!pg) narrowLedger(dataDir, opts.onWarning);
    const logs = new RunLogs(join(dataDir, 'logs'));
    try {
      logs.ensure();
    } catch (err) {
      throw new ServeError(
        `cannot create ${logs.dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
    let secrets = new Map<string, string[]>();
    let envSecrets = new Map<string, Record<string, string>>();
    let headerSecrets = new Map<string, Record<string, string>>();
    let serviceSecrets = new Map<string, Record<string, string>>();
    let notifiers = new Map<string, Map<string, ResolvedNotifier>>();
    let globalLocks: GlobalLocks | undefined;
    const clock = opts.clock ?? systemClock;
    const retentionDays = opts.retentionDays ?? 30;
    const transport = opts.transport ?? daemonTransport();
    const events = new DaemonEmitter();
    opts.onEvents?.(events);
    // one owner per ledger (SPEC §9 item 10): proven before anything is recovered from it
    let ownership: Ownership | null = null;
    if (!pg && isOwned(store)) {
      try {
        ownership = await claimLedger(store, join(dataDir, 'ledger.sqlite'), clock, events);
      } catch (err) {
        throw new ServeError((err as Error).message);
      }
      const owned = ownership;
      undo.unshift(() => owned.stop());
      let fatal = false;
      events.on('fenced', (f) => {
        owned.lose(f.reason); // no attempt starts any more
        if (!fatal) opts.onFatal?.(f.reason);
        fatal = true;
      });
    }
    const commands = {
      runner: opts.commandRunner ?? createCommandRunner(),
      hostEnv: inheritedEnv(env),
      logs,
    };
    const metrics = new DaemonMetrics(() => clock.now());
    events.on('notification', (n) => metrics.notification(n));
    // host mode (SPEC §15): watched jobs, their reports and, while leading, their detection
    const watching = (opts.watch ?? []).length > 0;
    const reportKeys = reportSecrets(opts.reportSecretRefs ?? [], watching, env);
    if (!reportKeys.ok) throw new ServeError(reportKeys.error);
    const watch = watching
      ? new Watch({ store, clock, events, metrics, secrets: reportKeys.secrets })
      : null;
    watch?.install(loaded.watched);
    // the HA layer and the PostgreSQL client load only with a PostgreSQL store (40 ms of start-up)
    const ha = pg ? await import('./cluster/replica.js') : null;
    const schedulerOn = (s: Store, leader?: SchedulerDeps['leader']): Scheduler =>
      new Scheduler({
        store: s,
        ...(retentionDays > 0 ? { retentionMs: retentionDays * 86_400_000 } : {}),
        clock,
        transport,
        events,
        metrics,
        secretsFor: (job) => secrets.get(job.key) ?? [],
        // command jobs (SPEC §11): PATH HOME LANG TZ of the daemon and nothing else of it
        commands,
        envSecretsFor: (job) => envSecrets.get(job.key) ?? {},
        headerSecretsFor: (job) => headerSecrets.get(job.key) ?? {},
        notifiersOf: (app) => notifiers.get(app),
        // supervised services (SPEC §17); an orphan outlives a killed leader by at most TTL/3
        services: {
          secretEnvFor: (app, name) => serviceSecrets.get(`${app}/${name}`) ?? {},
          ...(pg
            ? { orphanGraceCapSeconds: Math.max(1, Math.floor((opts.leaseSeconds ?? 15) / 3)) }
            : {}),
        },
        guardFor: (job, runKey, signal) => globalLocks?.for(job, runKey, signal),
        ...(leader && ha ? { leader, plannedMarginMs: ha.MAX_SKEW_MS } : {}),
        ...(ownership ? { leader: ownership } : {}),
        ...(watch ? { watch } : {}),
      });
    const runner: Scheduler | Cluster =
      ha && pg
        ? new ha.Cluster({
            store: pg,
            coordination: pg.coordination(),
            replicaId: opts.replicaId ?? `${hostIdentity()}:${process.pid}`,
            leaseMs: (opts.leaseSeconds ?? 15) * 1000,
            clock,
            // the real clock's timers are monotonic; an injected clock measures the term alone
            ...(opts.clock ? {} : { monotonic: () => performance.now() }),
            events,
            metrics,
            schedulerFor: (s, leader) => schedulerOn(s, leader),
          })
        : schedulerOn(store);
    // a single daemon leads itself (cronix_leader 1), so "no leader" alerts hold for both
    if (!pg) metrics.single();
    return {
      dataDir,
      token,
      store,
      logs,
      control: watch ? new WatchedControl(runner, watch) : runner,
      watch,
      async start() {
        try {
          const resolved = resolveJobSecrets(loaded.manifests, env);
          if (!resolved.ok) throw new ServeError(resolved.errors.join('\n'));
          secrets = resolved.secrets;
          envSecrets = resolved.envSecrets;
          headerSecrets = resolved.headerSecrets;
          const resolvedServices = resolveServiceSecrets(loaded.manifests, env);
          if (!resolvedServices.ok) throw new ServeError(resolvedServices.errors.join('\n'));
          serviceSecrets = resolvedServices.byService;
          const resolvedNotifiers = resolveAllNotifiers(
            [...loaded.manifests, ...loaded.watched],
            env,
            opts.smtpTls,
          );
          if (!resolvedNotifiers.ok) throw new ServeError(resolvedNotifiers.errors.join('\n'));
          notifiers = resolvedNotifiers.byApp;
          const problems = globalScopeProblems(loaded.manifests);
          if (problems.length > 0) throw new ServeError(problems.join('\n'));
          if (needsGlobalLocks(loaded.manifests)) {
            const locks = await openGlobalLocks(
              opts.lockBackend ?? env['CRONIX_REDIS_URL'],
              env,
              clock,
              loaded.manifests,
            );
            globalLocks = locks;
            undo.unshift(() => locks.close());
          }
          await watch?.load();
          await runner.start(loaded.manifests);
        } catch (err) {
          await unwind();
          throw err;
        }
      },
      async reload() {
        const next = await loadServedAndWatched(opts.manifests, opts.watch ?? []);
        if (next.errors.length > 0) return { ok: false, errors: next.errors };
        const nextSecrets = resolveJobSecrets(next.manifests, env);
        const nextNotifiers = resolveAllNotifiers(
          [...next.manifests, ...next.watched],
          env,
          opts.smtpTls,
        );
        const nextServices = resolveServiceSecrets(next.manifests, env);
        // each problem names its manifest file and field, as a manifest error does
        const at = (messages: readonly string[], kind: ProblemKind) =>
          locateProblems(messages, kind, next.sources);
        const problems = [
          ...at(nextSecrets.ok ? [] : nextSecrets.errors, 'secrets'),
          ...at(nextNotifiers.ok ? [] : nextNotifiers.errors, 'notifiers'),
          ...at(nextServices.ok ? [] : nextServices.errors, 'services'),
          ...at(globalScopeProblems(next.manifests), 'policy/max_concurrent'),
          ...(needsGlobalLocks(next.manifests) && !globalLocks
            ? at(
                globalScopeJobs(next.manifests).map(
                  (job) =>
                    `job ${job}: concurrency_scope global needs a Redis lock, but this daemon started without a lock backend; restart it with --lock-backend redis://host:6379 (or CRONIX_REDIS_URL), or use scope "host"`,
                ),
                'policy/concurrency_scope',
              )
            : []),
        ];
        if (!nextSecrets.ok || !nextNotifiers.ok || !nextServices.ok || problems.length > 0)
          return { ok: false, errors: problems };
        serviceSecrets = nextServices.byService;
        notifiers = nextNotifiers.byApp;
        secrets = nextSecrets.secrets;
        envSecrets = nextSecrets.envSecrets;
        headerSecrets = nextSecrets.headerSecrets;
        watch?.install(next.watched);
        await runner.reload(next.manifests);
        return { ok: true, jobs: runner.jobs().size + (watch?.jobs().size ?? 0) };
      },
      async stop(graceMs = 30_000) {
        const stopped = await runner.stop(graceMs);
        await unwind();
        return stopped;
      },
      abort: unwind,
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** A file's size in bytes, or null when it is not there. */
function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}
