/**
 * Which `cronix serve` runs on a data dir, for `cronix reload` (SIGHUP without looking up a
 * pid). The daemon holds an exclusive `flock` on `<data-dir>/serve.lock` for its whole life and
 * names itself in the sidecar `serve.holder` (boot.ts). A sidecar can outlive its daemon (a
 * SIGKILL leaves it), and its pid may since belong to another process — SIGHUP kills most
 * programs — so the pid is trusted only while that pid holds the lock: on Linux `/proc/locks`
 * says so without touching the lock; elsewhere a non-blocking try of the lock does.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeHolder } from '../locks/codec.js';
import { hostIdentity } from '../locks/host.js';

/** The daemon of a data dir, or why there is none to signal (one sentence with the fix). */
export type ServeHolder = { ok: true; pid: number } | { ok: false; reason: string };

/**
 * Whether `pid` holds a `flock` on the file with inode `ino`, from `/proc/locks`; null when
 * `/proc/locks` cannot be read (not Linux).
 */
function holdsFlock(pid: number, ino: number, procLocks: string | null): boolean | null {
  if (procLocks === null) return null;
  for (const line of procLocks.split('\n')) {
    // `12: FLOCK  ADVISORY  WRITE 3190 fe:00:2213571 0 EOF`; waiters are marked `->`
    const f = /^\d+:\s+FLOCK\s+\S+\s+\S+\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
    if (f !== null && Number(f[1]) === pid && Number(f[2]) === ino) return true;
  }
  return false;
}

function readProcLocks(): string | null {
  try {
    return readFileSync('/proc/locks', 'utf8');
  } catch {
    return null;
  }
}

/** Tries the lock without waiting; true when someone holds it. */
async function lockIsHeld(dataDir: string): Promise<boolean> {
  const { FlockBackend } = await import('../locks/flock.js');
  const locks = new FlockBackend(dataDir);
  try {
    const got = await locks.acquire('serve', {
      ttlMs: 0,
      holder: { pid: process.pid, host: hostIdentity(), acquiredAt: Date.now() },
    });
    if (!got.ok) return true;
    await got.lease.release();
    return false;
  } finally {
    await locks.close();
  }
}

/**
 * The pid of the `cronix serve` running on `dataDir` on this host, or why there is none.
 * `procLocks` is a seam for tests (default: the file's text, null when unreadable).
 */
export async function serveHolder(
  dataDir: string,
  procLocks: string | null = readProcLocks(),
): Promise<ServeHolder> {
  const none = `no cronix serve runs on data dir ${dataDir}`;
  const fix = '(start one with "cronix serve", or pass the --data-dir it was started with)';
  const lockFile = join(dataDir, 'serve.lock');
  let ino: number;
  try {
    ino = statSync(lockFile).ino;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      reason:
        code === 'ENOENT'
          ? `${none}: ${lockFile} does not exist ${fix}`
          : `cannot read ${lockFile}: ${code ?? String(err)}`,
    };
  }
  let text: string | null = null;
  try {
    text = readFileSync(join(dataDir, 'serve.holder'), 'utf8');
  } catch {
    // a daemon that stopped cleanly removed it
  }
  const holder = decodeHolder(text?.trim());
  if (holder === null) return { ok: false, reason: `${none}: serve.lock is not held ${fix}` };
  if (holder.host !== hostIdentity())
    return {
      ok: false,
      reason: `data dir ${dataDir} is held by pid ${holder.pid} on host ${holder.host}, not this host (${hostIdentity()}); run cronix reload there`,
    };
  const held = holdsFlock(holder.pid, ino, procLocks) ?? (await lockIsHeld(dataDir));
  if (!held)
    return {
      ok: false,
      reason: `${none}: its last daemon (pid ${holder.pid}) has stopped ${fix}`,
    };
  return { ok: true, pid: holder.pid };
}
