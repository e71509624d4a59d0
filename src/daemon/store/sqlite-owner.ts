/**
 * One owner per SQLite ledger (SPEC §9 items 6 and 10), proven by the ledger itself rather
 * than by `serve.lock` beside it (which an operator, a tmpfiles rule or a network filesystem can
 * lose):
 *
 * - **Claim.** A daemon claims the `owner` row in one `BEGIN IMMEDIATE` transaction before it
 *   recovers anything; while the row names an owner the caller cannot prove gone (its process is
 *   alive, or its heartbeat is fresh), the claim is refused, naming it.
 * - **Fence.** Every write transaction of the owner first checks that the row still names it
 *   and that the file at the ledger's path is still the file it opened (not deleted: no
 *   links left; not replaced: another inode). Otherwise the write throws
 *   {@link LedgerLostError} and writes nothing.
 * - **Heartbeat.** The owner renews its row; the same checks run.
 */
import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { LedgerOwner, OwnershipClaim } from './types.js';

/** The ledger is no longer this process's: taken by another daemon, deleted or replaced. */
export class LedgerLostError extends Error {
  override name = 'LedgerLostError';
}

/** How often the file's identity is looked at when writes come in a stream, in ms. */
const IDENTITY_EVERY_MS = 250;

interface OwnerRow {
  bootId: string;
  pid: number;
  pidStart: string | null;
  host: string;
  startedAt: number;
  heartbeatAt: number;
}

const OWNER_COLUMNS = `boot_id AS bootId, pid, pid_start AS pidStart, host, started_at AS startedAt,
  heartbeat_at AS heartbeatAt`;

/** The owner row and file identity of one SQLite ledger. */
export class SqliteOwnership {
  #me: LedgerOwner | null = null;
  #fd: number | null = null;
  #identity: { dev: number; ino: number } | null = null;
  #lastCheck = -Infinity;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
  ) {
    if (path === ':memory:' || path === '') return;
    this.#fd = openSync(path, 'r');
    const st = fstatSync(this.#fd);
    this.#identity = { dev: st.dev, ino: st.ino };
  }

  /** Claims the ledger for `me` unless its owner is alive (`isGone` says it is not). */
  claim(me: LedgerOwner, isGone: (holder: LedgerOwner) => boolean): OwnershipClaim {
    return this.db
      .transaction((): OwnershipClaim => {
        const holder = this.db.prepare(`SELECT ${OWNER_COLUMNS} FROM owner WHERE id = 1`).get() as
          OwnerRow | undefined;
        if (holder && holder.bootId !== me.bootId && !isGone(holder)) return { ok: false, holder };
        this.db
          .prepare(
            `INSERT INTO owner (id, boot_id, pid, pid_start, host, started_at, heartbeat_at)
             VALUES (1, @bootId, @pid, @pidStart, @host, @startedAt, @heartbeatAt)
             ON CONFLICT (id) DO UPDATE SET boot_id = excluded.boot_id, pid = excluded.pid,
               pid_start = excluded.pid_start, host = excluded.host,
               started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`,
          )
          .run(me);
        this.#me = me;
        return { ok: true, previous: holder ?? null };
      })
      .immediate();
  }

  /** Renews the owner's heartbeat. @throws {LedgerLostError} as {@link check}. */
  heartbeat(now: number): void {
    this.db
      .transaction(() => {
        this.check(true);
        this.db.prepare('UPDATE owner SET heartbeat_at = ? WHERE id = 1').run(now);
      })
      .immediate();
  }

  /**
   * Inside a write transaction: the row still names this process, and (at most every
   * {@link IDENTITY_EVERY_MS}, or when `always`) the file is the one opened. A no-op before
   * a claim (tests, tools).
   * @throws {LedgerLostError}
   */
  check(always = false): void {
    const me = this.#me;
    if (me === null) return;
    const row = this.db.prepare(`SELECT ${OWNER_COLUMNS} FROM owner WHERE id = 1`).get() as
      OwnerRow | undefined;
    if (row?.bootId !== me.bootId)
      throw new LedgerLostError(
        row
          ? `the ledger ${this.path} was taken over by another cronix serve (pid ${row.pid} on ${row.host})`
          : `the ledger ${this.path} has no owner any more`,
      );
    const now = performance.now();
    if (!always && now - this.#lastCheck < IDENTITY_EVERY_MS) return;
    this.#lastCheck = now;
    const problem = this.fileProblem();
    if (problem !== null) throw new LedgerLostError(problem);
  }

  /** Why the file at the path is not the one opened, or null. */
  private fileProblem(): string | null {
    if (this.#fd === null || this.#identity === null) return null;
    if (fstatSync(this.#fd).nlink === 0) return `the ledger ${this.path} was deleted`;
    let st;
    try {
      st = statSync(this.path);
    } catch {
      return `the ledger ${this.path} was deleted`;
    }
    if (st.ino !== this.#identity.ino || st.dev !== this.#identity.dev)
      return `the ledger ${this.path} was replaced by another file`;
    return null;
  }

  /** Gives the ledger up (a clean shutdown): the row is deleted while it still names this owner. */
  release(): void {
    const me = this.#me;
    if (me === null) return;
    this.db.prepare('DELETE FROM owner WHERE id = 1 AND boot_id = ?').run(me.bootId);
    this.#me = null;
  }

  /** This ledger's id (`meta.ledger_id`), created on first read. */
  ledgerId(make: () => string): { id: string; created: boolean } {
    return this.db
      .transaction(() => {
        const row = this.db.prepare(`SELECT value FROM meta WHERE key = 'ledger_id'`).get() as
          { value: string } | undefined;
        if (row) return { id: row.value, created: false };
        const id = make();
        this.db.prepare(`INSERT INTO meta (key, value) VALUES ('ledger_id', ?)`).run(id);
        return { id, created: true };
      })
      .immediate();
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
