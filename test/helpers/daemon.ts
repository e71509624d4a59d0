/**
 * An in-process daemon for tests: the real Scheduler, a real SQLite ledger in
 * a temp dir, the real HTTP transport, and an injected clock.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseManifest } from '../../src/contract/manifest/index.js';
import type { Manifest } from '../../src/contract/manifest/types.js';
import type { DaemonEvents } from '../../src/daemon/events.js';
import { Scheduler } from '../../src/daemon/scheduler.js';
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import type { RunRecord, Store } from '../../src/daemon/store/types.js';
import { inheritedEnv } from '../../src/fire/command-attempt.js';
import { createCommandRunner } from '../../src/fire/command-runner.js';
import { createHttpTransport } from '../../src/fire/http-transport.js';
import type { Clock } from '../../src/fire/types.js';
import { RunLogs } from '../../src/daemon/run-logs.js';

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
  dbPath: string;
  /** Command runs' output, in `<dir of the ledger>/logs`. */
  logs: RunLogs;
  /** Ended runs, in end order. */
  ended: RunRecord[];
  /** Resolves when `n` runs have ended in total. */
  waitEnded(n: number, timeoutMs?: number): Promise<RunRecord[]>;
  stop(): Promise<void>;
}

/** Starts a scheduler over a (new or given) SQLite file. */
export async function startTestDaemon(
  clock: Clock,
  manifests: Manifest[],
  dbPath = join(mkdtempSync(join(tmpdir(), 'cronix-daemon-')), 'ledger.sqlite'),
  retentionMs?: number,
  /** Command jobs: their resolved env_from_secrets by `app/job` (default none). */
  envSecrets: Record<string, Record<string, string>> = {},
): Promise<TestDaemon> {
  const store = await openSqliteStore(dbPath);
  const transport = createHttpTransport({ keepAlive: true });
  const logs = new RunLogs(join(dirname(dbPath), 'logs'));
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
  return {
    scheduler,
    store,
    dbPath,
    logs,
    ended,
    waitEnded(n, timeoutMs = 10_000) {
      if (ended.length >= n) return Promise.resolve(ended);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${ended.length} of ${n} runs ended`)),
          timeoutMs,
        );
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(ended)) });
      });
    },
    async stop() {
      await scheduler.stop(2000);
      await store.close();
      await transport.close?.();
    },
  };
}
