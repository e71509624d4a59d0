/**
 * Ledger throughput: durable runs recorded per second by the real SQLite store
 * (WAL, `synchronous = FULL`, so every transaction is fsynced) on a temp file
 * in the OS temp dir, in three shapes: one run per transaction, batches of 100
 * (a busy scheduler tick), and 10,000 runs in one transaction (10,000 jobs due
 * in the same second).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { openSqliteStore } from '../src/daemon/store/sqlite.js';
import type { NewRun } from '../src/daemon/store/types.js';

/** One row of the ledger table in BENCHMARKS.md. */
export interface LedgerRow {
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

/** A realistic queued scheduled run (UUIDv7 id as the daemon assigns, SPEC-shaped run key). */
function run(): NewRun {
  const i = ++n;
  const job = `job-${String(i % 10_000).padStart(5, '0')}`;
  const at = T0 + Math.floor(i / 10_000) * 60_000;
  return {
    id: uuidv7(),
    runKey: `bench-app/${job}#${new Date(at).toISOString().replace('.000Z', 'Z')}#9f86d081884c7d65`,
    app: 'bench-app',
    job,
    scheduleIndex: 0,
    scheduledTime: at,
    trigger: 'schedule',
    phase: 'queued',
    outcome: null,
    attempts: 0,
    lastStatus: null,
    createdAt: at + 3,
    startedAt: null,
    endedAt: null,
    dueAt: null,
  };
}

/** Measures one shape: `transactions` calls of `batch` runs each (after one warm-up call). */
async function measure(
  what: string,
  batch: number,
  transactions: number,
  dir: string,
): Promise<LedgerRow> {
  const store = await openSqliteStore(join(dir, `ledger-${batch}.db`));
  try {
    await store.insertRuns(Array.from({ length: batch }, run));
    const times: number[] = [];
    let total = 0;
    for (let t = 0; t < transactions; t++) {
      const runs = Array.from({ length: batch }, run);
      const start = performance.now();
      await store.insertRuns(runs);
      const ms = performance.now() - start;
      times.push(ms);
      total += ms;
    }
    return {
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

/** Runs the three ledger shapes on a fresh temp dir and returns one row each. */
export async function benchLedger(): Promise<LedgerRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-bench-ledger-'));
  try {
    return [
      await measure('one run per transaction', 1, 500, dir),
      await measure('batches of 100', 100, 200, dir),
      await measure('10,000 in one transaction', 10_000, 10, dir),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Markdown table lines for BENCHMARKS.md. */
export function ledgerTable(rows: LedgerRow[]): string[] {
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
  const ms = (x: number): string => (x < 1 ? x.toFixed(3) : x.toFixed(2));
  return [
    '| shape | runs per transaction | transactions | runs/s | median ms per transaction | p99 ms per transaction |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${fmt(r.batch)} | ${fmt(r.transactions)} | ${fmt(r.runsPerSec)} | ${ms(r.medianMsPerTx)} | ${ms(r.p99MsPerTx)} |`,
    ),
  ];
}
