/**
 * The report spool of one host (SPEC §15): reports waiting to be sent, in
 * `<state-dir>/reports/`, one file per report, sent in order before the next report from this
 * host. Shared by every shim on the host (one state dir), so:
 *
 * - adding a report needs no lock: each report is its own file, written atomically (temp file
 *   + rename), named `<epoch ms, 15 digits>-<pid>-<seq, 6 digits>-<bytes>.json` so that names
 *   sort in the order the reports were made and carry their size (the bounds need no stat);
 * - sending, dropping and the drop counter happen only under the spool's flock
 *   (`<state-dir>/reports/spool.lock`, the host locks of `src/locks/flock.ts`): one shim at a
 *   time drains, so no report is sent twice by two shims and no file is half-read;
 * - bounded: at most {@link SPOOL_MAX_REPORTS} reports and {@link SPOOL_MAX_BYTES} bytes; the
 *   oldest beyond are dropped and counted in `dropped`, a count the next sent report carries
 *   (`spool_dropped`).
 *
 * A spooled report keeps its destination and its secret refs (refs, never values); it is
 * signed when it is sent, so a late send is never stale.
 */
import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic.js';
import { ensureDirSync } from '../io/dirs.js';
import { FlockBackend } from '../locks/flock.js';
import type { Lease } from '../locks/types.js';

/** Most reports kept in the spool. */
export const SPOOL_MAX_REPORTS = 10_000;
/** Most bytes of reports kept in the spool. */
export const SPOOL_MAX_BYTES = 50 * 1024 * 1024;
/** How often a shim retries the spool lock while another shim drains. */
const LOCK_POLL_MS = 20;

const NAME = /^(\d{15})-(\d+)-(\d{6})-(\d+)\.json$/;

/** One spooled report: where it goes, the refs that sign it, the body (JSON text, unsigned). */
export interface SpooledReport {
  url: string;
  secretRefs: string[];
  body: string;
}

/** A spooled report as listed: its file name and size. */
export interface SpoolItem {
  name: string;
  bytes: number;
}

let sequence = 0;

/** The spool folder of a state dir. */
export function spoolDir(stateDir: string): string {
  return join(stateDir, 'reports');
}

/** The spool of one state dir. */
export class ReportSpool {
  readonly dir: string;
  private readonly locks: FlockBackend;

  constructor(
    stateDir: string,
    private readonly host: string,
    private readonly now: () => number = Date.now,
  ) {
    this.dir = spoolDir(stateDir);
    this.locks = new FlockBackend(this.dir);
  }

  /** Adds a report (no lock needed). Throws when the state dir cannot be written. */
  add(report: SpooledReport): string {
    ensureDirSync(this.dir, 0o700);
    const text = JSON.stringify({
      url: report.url,
      secret_refs: report.secretRefs,
      body: report.body,
    });
    const bytes = Buffer.byteLength(text);
    sequence = (sequence + 1) % 1_000_000;
    const name = `${String(this.now()).padStart(15, '0')}-${process.pid}-${String(sequence).padStart(6, '0')}-${bytes}.json`;
    writeFileAtomic(join(this.dir, name), text, 0o600, { exactMode: true });
    return name;
  }

  /**
   * Takes the spool lock, polling until `deadline` (epoch ms); null when another shim held it
   * all along. Throws when the spool folder cannot be used.
   */
  async lock(deadline: number): Promise<Lease | null> {
    ensureDirSync(this.dir, 0o700);
    for (;;) {
      const r = await this.locks.acquire('spool', {
        ttlMs: 0,
        holder: { pid: process.pid, host: this.host, acquiredAt: this.now() },
      });
      if (r.ok) return r.lease;
      if (Date.now() + LOCK_POLL_MS >= deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }

  /** The spooled reports, oldest first. */
  list(): SpoolItem[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const items: SpoolItem[] = [];
    for (const name of names) {
      const m = NAME.exec(name);
      if (m) items.push({ name, bytes: Number(m[4]) });
    }
    return items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Reads one report; null when it is gone or unreadable (then it is removed). */
  read(item: SpoolItem): SpooledReport | null {
    try {
      const raw = JSON.parse(readFileSync(join(this.dir, item.name), 'utf8')) as Record<
        string,
        unknown
      >;
      const refs = raw['secret_refs'];
      if (
        typeof raw['url'] === 'string' &&
        typeof raw['body'] === 'string' &&
        Array.isArray(refs) &&
        refs.every((r) => typeof r === 'string')
      ) {
        return { url: raw['url'], secretRefs: refs as string[], body: raw['body'] };
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    }
    this.remove(item);
    return null;
  }

  /** Removes one report (sent, or dropped). Call under the lock. */
  remove(item: SpoolItem): void {
    try {
      unlinkSync(join(this.dir, item.name));
    } catch {
      // already gone
    }
  }

  /**
   * Drops the oldest reports beyond the bounds and adds their number to the drop counter;
   * returns the reports left, oldest first. Call under the lock.
   */
  trim(items: SpoolItem[]): SpoolItem[] {
    let bytes = items.reduce((n, i) => n + i.bytes, 0);
    let from = 0;
    while (
      from < items.length &&
      (items.length - from > SPOOL_MAX_REPORTS || bytes > SPOOL_MAX_BYTES)
    ) {
      bytes -= (items[from] as SpoolItem).bytes;
      this.remove(items[from] as SpoolItem);
      from++;
    }
    if (from > 0) this.setDropped(this.dropped() + from);
    return items.slice(from);
  }

  /** Reports dropped since the last count was sent. */
  dropped(): number {
    try {
      const n = Number(readFileSync(join(this.dir, 'dropped'), 'utf8'));
      return Number.isSafeInteger(n) && n > 0 ? n : 0;
    } catch {
      return 0;
    }
  }

  /** Sets the drop counter. Call under the lock. */
  setDropped(n: number): void {
    writeFileAtomic(join(this.dir, 'dropped'), String(Math.max(0, n)), 0o600);
  }
}
