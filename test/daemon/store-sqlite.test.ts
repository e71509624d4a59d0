/**
 * The SQLite store: the shared contract on a temp file, plus what only SQLite
 * has: durability settings, the migrations table, reopening, and a real child
 * process SIGKILLed while it writes.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  migrateSqlite,
  SchemaTooNewError,
  SQLITE_MIGRATIONS,
} from '../../src/daemon/store/migrations.js';
import { openSqliteStore, SqliteStore } from '../../src/daemon/store/sqlite.js';
import { storeContract } from './store-contract.js';
import { insertRuns, newRun, T0 } from './store-fixtures.js';

const WRITER = fileURLToPath(new URL('./store-crash-writer.ts', import.meta.url));

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'cronix-store-'));

storeContract('sqlite (temp file)', async () => {
  const dir = tempDir();
  return {
    store: new SqliteStore(join(dir, 'ledger.db')),
    another: () => new SqliteStore(join(dir, 'ledger.db')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('SqliteStore', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = tempDir();
    path = join(dir, 'ledger.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs in WAL mode with synchronous=FULL, a busy timeout, foreign keys and a 2 MB page cache', async () => {
    const store = await openSqliteStore(path, { busyTimeoutMs: 1234 });
    expect(store.settings()).toEqual({
      journalMode: 'wal',
      synchronous: 2,
      busyTimeoutMs: 1234,
      foreignKeys: true,
      cacheKib: 2000, // SQLite's default, not better-sqlite3's 16 MB
    });
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal'); // persisted in the file
    raw.close();
  });

  it('records applied migrations once, with the injected clock', async () => {
    const store = await openSqliteStore(path, { now: () => T0 });
    await store.migrate();
    const applied = SQLITE_MIGRATIONS.map((m) => ({
      version: m.version,
      name: m.name,
      appliedAt: T0,
    }));
    expect(applied.slice(0, 6).map((m) => m.name)).toEqual([
      'init',
      'claims',
      'commands',
      'notifications',
      'owner',
      'host_runs',
    ]);
    expect(store.appliedMigrations()).toEqual(applied);
    await store.close();
    const again = await openSqliteStore(path, { now: () => T0 + 1 });
    expect(again.appliedMigrations()).toEqual(applied);
    await again.close();
  });

  it('numbers migrations from 1 upwards, each once, in order', () => {
    // numbers are handed out per branch of work, so a branch may hold 7 before 6 is merged
    const versions = SQLITE_MIGRATIONS.map((m) => m.version);
    expect(versions[0]).toBe(1);
    expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
  });

  it('a failing migration leaves no trace and is retried next time', () => {
    const db = new Database(path);
    const next = Math.max(...SQLITE_MIGRATIONS.map((m) => m.version)) + 1;
    const broken = { version: next, name: 'broken', sql: 'CREATE TABLE extra (a); NOT SQL;' };
    expect(() => migrateSqlite(db, [...SQLITE_MIGRATIONS, broken])).toThrow();
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck();
    expect(tables.all()).toContain('runs');
    expect(tables.all()).not.toContain('extra');
    const fixed = { ...broken, sql: 'CREATE TABLE extra (a);' };
    expect(migrateSqlite(db, [...SQLITE_MIGRATIONS, fixed])).toEqual([next]);
    expect(migrateSqlite(db, [...SQLITE_MIGRATIONS, fixed])).toEqual([]);
    db.close();
  });

  it('migration 2 fills the claims from a ledger written by migration 1 (first row wins)', async () => {
    const db = new Database(path);
    migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 1));
    const insert = db.prepare(`INSERT INTO runs (id, run_key, app, job, schedule_index,
      scheduled_time, "trigger", phase, outcome, created_at, ended_at)
      VALUES (?, ?, 'a', 'j', ?, ?, ?, 'ended', ?, 0, ?)`);
    insert.run('r1', 'k1', 0, T0, 'schedule', 'success', T0 + 5);
    insert.run('r2', 'k1', 0, T0, 'schedule', 'duplicate', T0 + 6); // the same instant again
    insert.run('r3', 'k2', 0, T0 + 60_000, 'catchup', 'retries_exhausted', T0 + 7);
    insert.run('r4', 'k3', null, T0, 'manual', 'success', T0 + 8);
    db.close();
    const store = await openSqliteStore(path);
    expect(await store.keyHolder('k1')).toEqual({ runId: 'r1', state: 'succeeded' });
    expect(await store.keyHolder('k2')).toBeNull();
    expect(await store.keyHolder('k3')).toEqual({ runId: 'r4', state: 'succeeded' });
    const again = newRun({ app: 'a', job: 'j', scheduleIndex: 0, scheduledTime: T0 });
    const later = newRun({ app: 'a', job: 'j', scheduleIndex: 0, scheduledTime: T0 + 60_000 });
    expect((await store.write([{ kind: 'insert', run: again }]))[0]).toEqual({
      kind: 'fire-exists',
    });
    expect((await store.write([{ kind: 'insert', run: later }]))[0]).toEqual({
      kind: 'fire-exists',
    });
    expect((await store.getRun('r2'))?.error).toBeNull();
    expect(store.integrityCheck()).toEqual(['ok']);
    await store.close();
  });

  it('refuses a database migrated by a newer cronix', async () => {
    await (await openSqliteStore(path)).close();
    const raw = new Database(path);
    raw.prepare("INSERT INTO schema_migrations VALUES (99, 'future', 0)").run();
    raw.close();
    await expect(openSqliteStore(path)).rejects.toThrow(SchemaTooNewError);
  });

  it('refuses to work before migrate()', async () => {
    const store = new SqliteStore(path);
    await expect(store.listRuns({})).rejects.toThrow(/migrate\(\)/);
    await store.close();
  });

  it('keeps everything across close and reopen, and seq keeps growing', async () => {
    const first = await openSqliteStore(path);
    const rows = await insertRuns(first, [newRun(), newRun({ phase: 'running', startedAt: T0 })]);
    const ref = { app: 'billing', job: 'settle', scheduleIndex: 0 };
    await first.write([{ kind: 'checkpoint', ref, at: T0 }]);
    await first.setPaused('billing', 'settle', true);
    await first.close();
    await first.close(); // idempotent

    const second = await openSqliteStore(path);
    expect(await second.listRuns({})).toEqual([...rows].reverse());
    expect(await second.checkpoints()).toEqual([{ ...ref, at: T0 }]);
    expect(await second.keyHolder(rows[1]!.runKey)).toEqual({
      runId: rows[1]!.id,
      state: 'running',
    });
    expect(await second.pausedJobs()).toEqual(new Set(['billing/settle']));
    const [later] = await insertRuns(second, [newRun()]);
    expect(later!.seq).toBeGreaterThan(rows[1]!.seq);
    expect(second.integrityCheck()).toEqual(['ok']);
    await second.close();
  });

  it('uses the indexes for the hot lookups', async () => {
    const store = await openSqliteStore(path);
    await store.close();
    const db = new Database(path, { readonly: true });
    const plan = (sql: string): string =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((r) => r.detail)
        .join('; ');
    expect(plan("SELECT run_id, state FROM run_keys WHERE run_key = 'k'")).toMatch(
      /USING PRIMARY KEY/,
    );
    expect(plan("DELETE FROM run_keys WHERE state = 'running'")).toMatch(/run_keys_state/);
    expect(
      plan("SELECT MAX(ended_at) FROM runs WHERE app = 'a' AND job = 'j' AND outcome = 'success'"),
    ).toMatch(/runs_app_job_success/);
    expect(
      plan("SELECT * FROM runs WHERE phase = 'queued' AND app = 'a' AND job = 'j' ORDER BY seq"),
    ).toMatch(/USING INDEX runs_(app_job_seq|phase)/);
    expect(plan("SELECT * FROM runs WHERE outcome = 'skipped' ORDER BY seq DESC")).toMatch(
      /USING INDEX runs_outcome/,
    );
    db.close();
  });
});

describe('SqliteStore crash durability (real child process, SIGKILL)', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts the writer, SIGKILLs it after `killAfter` reported batches; returns the reports. */
  async function writeUntilKilled(path: string, batchSize: number, killAfter: number) {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, path, String(batchSize)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const reported: number[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      const m = /^committed (\d+) (\d+)$/.exec(line);
      if (!m) throw new Error(`unexpected writer output: ${line}`);
      reported.push(Number(m[1]));
      if (reported.length === killAfter) child.kill('SIGKILL');
    }
    const signal = await exited;
    if (signal !== 'SIGKILL') throw new Error(`writer exited by itself: ${stderr}`);
    return reported;
  }

  it.each([
    { batchSize: 500, killAfter: 7 },
    { batchSize: 50, killAfter: 40 },
    { batchSize: 2000, killAfter: 3 },
  ])(
    'keeps every reported batch of $batchSize whole after SIGKILL',
    async ({ batchSize, killAfter }) => {
      const path = join(dir, 'ledger.db');
      const reported = await writeUntilKilled(path, batchSize, killAfter);
      expect(reported.length).toBeGreaterThanOrEqual(killAfter);
      // killed without closing: the committed batches live in the WAL, not yet in the main file
      expect(existsSync(`${path}-wal`)).toBe(true);

      // a reader sees the WAL the killed writer left behind
      const store = await openSqliteStore(path);
      expect(store.integrityCheck()).toEqual(['ok']);
      await store.close();
      const db = new Database(path, { readonly: true });
      const perBatch = new Map<number, number>();
      for (const id of db.prepare('SELECT id FROM runs').pluck().all() as string[]) {
        const batch = Number(/^b(\d+)-r\d+$/.exec(id)?.[1]);
        perBatch.set(batch, (perBatch.get(batch) ?? 0) + 1);
      }
      db.close();
      // every reported batch is there in full …
      for (const b of reported) expect(perBatch.get(b)).toBe(batchSize);
      // … and no batch is there in part (at most one committed but not yet reported)
      const present = [...perBatch.keys()].sort((a, b) => a - b);
      expect(present).toEqual(present.map((_, i) => i));
      expect(present.length - reported.length).toBeLessThanOrEqual(1);
      for (const n of perBatch.values()) expect(n).toBe(batchSize);
    },
  );
});
