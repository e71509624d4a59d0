/**
 * Ledger throughput: durable runs recorded per second by the real SQLite store
 * (WAL, `synchronous = FULL`, so every transaction is fsynced) on a temp file
 * in the OS temp dir, and by the PostgreSQL store on the local server (its
 * default `synchronous_commit = on`: every commit is flushed), in three shapes:
 * one run per transaction, batches of 100 (a busy scheduler tick), and 10,000
 * runs in one transaction (10,000 jobs due in the same second). Each run is
 * recorded as the daemon records a fire it starts: with its fire claim and its
 * run-key claim.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uuidv7 } from '../src/fire/ids.js';
import { PostgresStore } from '../src/daemon/store/postgres.js';
import { openSqliteStore } from '../src/daemon/store/sqlite.js';
import type { NewRun, Store } from '../src/daemon/store/types.js';

/** One row of the ledger table in BENCHMARKS.md. */
export interface LedgerRow {
  store: 'SQLite' | 'PostgreSQL';
  what: string;
  /** Runs per `insertRuns` call (= per transaction, = per fsync). */
  batch: number;
  /** Transactions measured. */
  transactions: number;
  /** Total runs / total time. */
  runsPerSec: number;
  /** Median and p99 wall time of one `insertRuns` call, ms. */
  medianMsPerTx: number;
  p99MsPerTx: number;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

const T0 = Date.UTC(2026, 0, 1);
let n = 0;

/**
 * A realistic scheduled run as the daemon records it when it starts it (UUIDv7 id, SPEC-shaped
 * run key): phase `running`, so each insert also takes the fire claim and the run-key claim.
 */
function run(): NewRun {
  const i = ++n;
  const job = `job-${String(i % 10_000).padStart(5, '0')}`;
  const at = T0 + Math.floor(i / 10_000) * 60_000;
  return {
    id: uuidv7(Date.now()),
    runKey: `bench-app/${job}#${new Date(at).toISOString().replace('.000Z', 'Z')}#9f86d081884c7d65`,
    app: 'bench-app',
    job,
    scheduleIndex: 0,
    scheduledTime: at,
    trigger: 'schedule',
    phase: 'running',
    outcome: null,
    attempts: 0,
    lastStatus: null,
    createdAt: at + 3,
    startedAt: at + 3,
    endedAt: null,
    dueAt: null,
    error: null,
    attemptLog: [],
    outputTruncated: false,
    outputLost: null,
  };
}

/** Measures one shape: `transactions` calls of `batch` runs each (after one warm-up call). */
async function measure(
  kind: LedgerRow['store'],
  open: () => Promise<Store>,
  what: string,
  batch: number,
  transactions: number,
): Promise<LedgerRow> {
  const store = await open();
  try {
    await store.write(
      Array.from({ length: batch }, () => ({ kind: 'insert' as const, run: run() })),
    );
    const times: number[] = [];
    let total = 0;
    for (let t = 0; t < transactions; t++) {
      const ops = Array.from({ length: batch }, () => ({ kind: 'insert' as const, run: run() }));
      const start = performance.now();
      await store.write(ops);
      const ms = performance.now() - start;
      times.push(ms);
      total += ms;
    }
    return {
      store: kind,
      what,
      batch,
      transactions,
      runsPerSec: (batch * transactions) / (total / 1000),
      medianMsPerTx: quantile(times, 0.5),
      p99MsPerTx: quantile(times, 0.99),
    };
  } finally {
    await store.close();
  }
}

/** The shapes measured on each store. */
const SHAPES = [
  ['one run per transaction', 1, 500],
  ['batches of 100', 100, 200],
  ['10,000 in one transaction', 10_000, 10],
] as const;

/**
 * Runs the three ledger shapes on SQLite (a fresh temp dir) and on PostgreSQL
 * (a fresh schema on `pgUrl`, dropped afterwards) and returns one row each.
 */
export async function benchLedger(
  pgUrl = process.env['CRONIX_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
): Promise<LedgerRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-bench-ledger-'));
  const rows: LedgerRow[] = [];
  try {
    for (const [what, batch, n] of SHAPES)
      rows.push(
        await measure('SQLite', () => openSqliteStore(join(dir, `l-${batch}.db`)), what, batch, n),
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const schema = `bench_${Date.now().toString(36)}`;
  const url = `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`;
  try {
    for (const [what, batch, n] of SHAPES)
      rows.push(
        await measure(
          'PostgreSQL',
          async () => {
            const s = PostgresStore.open(url);
            await s.migrate();
            return s;
          },
          what,
          batch,
          n,
        ),
      );
  } finally {
    const admin = PostgresStore.open(url);
    await admin.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.close();
  }
  return rows;
}

/** Markdown table lines for BENCHMARKS.md. */
export function ledgerTable(rows: LedgerRow[]): string[] {
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
  const ms = (x: number): string => (x < 1 ? x.toFixed(3) : x.toFixed(2));
  return [
    '| store | shape | runs per transaction | transactions | runs/s | median ms per transaction | p99 ms per transaction |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.store} | ${r.what} | ${fmt(r.batch)} | ${fmt(r.transactions)} | ${fmt(r.runsPerSec)} | ${ms(r.medianMsPerTx)} | ${ms(r.p99MsPerTx)} |`,
    ),
  ];
}
