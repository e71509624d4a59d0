/**
 * An in-process daemon for tests: the real Scheduler, a real ledger — SQLite in a temp dir, or
 * PostgreSQL in a fresh schema of the shared server (the scheduler's test files run on both,
 * as the store contract does) —, the real HTTP transport, and an injected clock.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseManifest } from '../../src/contract/manifest/index.js';
import type { Manifest } from '../../src/contract/manifest/types.js';
import type { DaemonEvents } from '../../src/daemon/events.js';
import { Scheduler } from '../../src/daemon/scheduler.js';
import { PostgresStore } from '../../src/daemon/store/postgres.js';
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import type { RunRecord, Store } from '../../src/daemon/store/types.js';
import { inheritedEnv } from '../../src/fire/command-attempt.js';
import { createCommandRunner } from '../../src/fire/command-runner.js';
import { createHttpTransport } from '../../src/fire/http-transport.js';
import type { Clock } from '../../src/fire/types.js';
import { RunLogs } from '../../src/daemon/run-logs.js';
import { ManualClock, settle } from './manual-clock.js';
import { dropSchema, PG_URL, pgQuery, schemaName, withSchema } from './pg.js';

/** The ledgers the scheduler's tests run on. */
export const LEDGERS = ['sqlite', 'postgres'] as const;
export type LedgerKind = (typeof LEDGERS)[number];

const schemas: string[] = [];

/** A new, empty ledger's location: a SQLite file in a temp dir, or a PostgreSQL schema URL. */
export function freshLedger(kind: LedgerKind = 'sqlite'): string {
  if (kind === 'sqlite')
    return join(mkdtempSync(join(tmpdir(), 'cronix-daemon-')), 'ledger.sqlite');
  const schema = schemaName('sched');
  schemas.push(schema);
  return withSchema(PG_URL, schema);
}

/** Drops the PostgreSQL schemas {@link freshLedger} made (call in `afterAll`). */
export async function dropLedgers(): Promise<void> {
  for (const s of schemas.splice(0)) await dropSchema(s);
}

const isPg = (ledger: string): boolean => ledger.startsWith('postgres');

/** Opens (and migrates) the store of a ledger from {@link freshLedger}. */
export async function openLedger(ledger: string): Promise<Store> {
  if (!isPg(ledger)) return openSqliteStore(ledger);
  const store = PostgresStore.open(ledger);
  await store.migrate();
  return store;
}

/** Moves every checkpoint of a (stopped daemon's) ledger to `at`, as if it had been lost. */
export async function rewindCheckpoints(ledger: string, at: number): Promise<void> {
  if (isPg(ledger)) {
    const schema = new URL(ledger).searchParams.get('schema') as string;
    await pgQuery(`UPDATE ${schema}.checkpoints SET at = $1`, [at]);
    return;
  }
  const { default: Database } = await import('better-sqlite3');
  const raw = new Database(ledger);
  raw.prepare('UPDATE checkpoints SET at = ?').run(at);
  raw.close();
}

/** A manifest from raw jobs (normalized by the real parser). */
export function manifest(app: string, jobs: Record<string, unknown>[]): Manifest {
  const r = parseManifest({
    version: 1,
    app,
    jobs: jobs.map((j) => ({ auth: { secret_refs: ['raw:test-secret-0123456789'] }, ...j })),
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.manifest;
}

export interface TestDaemon {
  scheduler: Scheduler;
  store: Store;
  /** Where its ledger is (a SQLite file or a PostgreSQL schema URL): to start on it again. */
  ledger: string;
  /** The SQLite file of a SQLite ledger (the same as `ledger`). */
  dbPath: string;
  /** Command runs' output, in `<dir of the ledger>/logs`. */
  logs: RunLogs;
  /** Ended runs, in end order. */
  ended: RunRecord[];
  /** Resolves when `n` runs have ended in total. */
  waitEnded(n: number, timeoutMs?: number): Promise<RunRecord[]>;
  /**
   * Resolves once the daemon has nothing in flight but sleeping timers: its writes are durable
   * and their answers handled. A fake clock moved on only after this never races the ledger's
   * real I/O (a PostgreSQL ledger's round trips).
   */
  quiesce(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a scheduler over a (new or given) ledger: a SQLite file, or a PostgreSQL schema URL. */
export async function startTestDaemon(
  clock: Clock,
  manifests: Manifest[],
  dbPath = freshLedger('sqlite'),
  retentionMs?: number,
  /** Command jobs: their resolved env_from_secrets by `app/job` (default none). */
  envSecrets: Record<string, Record<string, string>> = {},
): Promise<TestDaemon> {
  const store = await openLedger(dbPath);
  const transport = createHttpTransport({ keepAlive: true });
  const logsDir = isPg(dbPath) ? mkdtempSync(join(tmpdir(), 'cronix-daemon-')) : dirname(dbPath);
  const logs = new RunLogs(join(logsDir, 'logs'));
  logs.ensure();
  const scheduler = new Scheduler({
    store,
    clock,
    transport,
    secretsFor: () => ['test-secret-0123456789'],
    commands: { runner: createCommandRunner(), hostEnv: inheritedEnv(process.env), logs },
    envSecretsFor: (job) => envSecrets[job.key] ?? {},
    random: () => 0.5,
    ...(retentionMs !== undefined ? { retentionMs } : {}),
  });
  const ended: RunRecord[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  scheduler.events.on('run-ended', (run: DaemonEvents['run-ended'][0]) => {
    ended.push(run);
    for (const w of waiters.filter((w) => ended.length >= w.n)) w.resolve();
  });
  await scheduler.start(manifests);
  // time moves on only between the loop's turns (see ManualClock.between)
  if (clock instanceof ManualClock) clock.between = () => scheduler.timer.whenAsleep();
  return {
    scheduler,
    store,
    ledger: dbPath,
    dbPath,
    logs,
    ended,
    waitEnded(n, timeoutMs = 10_000) {
      if (ended.length >= n) return Promise.resolve(ended);
      return new Promise((resolve, reject) => {
        // on a timeout, what the ledger holds says where the runs stopped (never planned,
        // planned and not launched, running): a rare stall is then diagnosable from CI's log
        const timer = setTimeout(() => {
          const said = `only ${ended.length} of ${n} runs ended`;
          void store
            .listRuns({ limit: 10 })
            .then((runs) =>
              runs
                .map((r) => `${r.app}/${r.job} ${r.trigger} ${r.phase}/${r.outcome ?? '-'}`)
                .join('; '),
            )
            .catch((err: Error) => `(ledger unreadable: ${err.message})`)
            .then((held) =>
              reject(new Error(`${said}; the ledger's newest runs: ${held || 'none'}`)),
            );
        }, timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(ended)) });
      });
    },
    async quiesce() {
      for (let round = 0; round < 3; round++) {
        await settle(3);
        await scheduler.ledger.idle();
        await scheduler.pipeline.settled();
        await scheduler.timer.whenAsleep();
      }
    },
    async stop() {
      await scheduler.stop(2000);
      await store.close();
      await transport.close?.();
    },
  };
}
