/**
 * The data dir and what `serve` keeps in it at start-up (SPEC §7, §9 item 1): made private
 * (0700; a pre-existing one narrowed, the ledger's files 0600), locked for the daemon's life
 * (`serve.lock`), and the API token read from it or written into it, atomically and durably.
 * Every problem is a {@link ServeError} naming the path, the cause and the fix.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic.js';
import { ensurePrivateDir, narrowFiles, PrivatePathError, readPrivateFile } from '../io/private.js';
import { hostIdentity } from '../locks/host.js';

/** A configuration problem that stops `serve` before it starts (exit 1 or 2). */
export class ServeError extends Error {}

/**
 * A data dir that cannot be written, as one line naming the directory, the cause and the fix
 * (never "internal error"): `data dir /srv/x is not writable (EROFS: read-only file system) …`.
 */
export function dataDirProblem(dataDir: string, step: string, err: unknown): ServeError {
  const code = (err as NodeJS.ErrnoException).code;
  const cause =
    code === 'EROFS'
      ? 'EROFS: read-only file system'
      : code === 'EACCES' || code === 'EPERM'
        ? `${code}: permission denied for user ${process.getuid?.() ?? '?'}`
        : (code ?? (err as Error).message ?? String(err));
  return new ServeError(
    `data dir ${dataDir} is not writable (${cause}) while ${step}; pass --data-dir with a directory this user can write (default ./.cronix), or fix its permissions`,
  );
}

/**
 * Creates the data dir with mode 0700, or narrows an existing one that this user owns: it holds
 * the ledger, the token, the logged-out sessions and run output. `warn` is told when the dir
 * belongs to someone else and stays open.
 */
export function prepareDataDir(dataDir: string, warn?: (message: string) => void): void {
  try {
    const dir = ensurePrivateDir(dataDir);
    if (dir.warning !== undefined) warn?.(dir.warning);
  } catch (err) {
    if (err instanceof PrivatePathError) throw new ServeError(`--data-dir: ${err.message}`);
    throw dataDirProblem(dataDir, 'creating it', err);
  }
}

/** Narrows the SQLite ledger's files to 0600 (also in a data dir that cannot be made private). */
export function narrowLedger(dataDir: string, warn?: (message: string) => void): void {
  const open = narrowFiles(dataDir, LEDGER_FILES);
  if (open.length > 0)
    warn?.(
      `${open.join(', ')} ${open.length === 1 ? 'is' : 'are'} readable by other users and not this user's to change; run "chmod 600" on ${open.length === 1 ? 'it' : 'them'} as the owner`,
    );
}

/** The SQLite ledger's files in the data dir. */
const LEDGER_FILES = ['ledger.sqlite', 'ledger.sqlite-wal', 'ledger.sqlite-shm'];

/** How to make a token file, for messages. */
const makeToken = (file: string): string =>
  `head -c 24 /dev/urandom | base64 > ${file} && chmod 600 ${file}`;

/** Writes a new API token: temp file, fsync, rename, fsync the directory (SPEC §7: mode 0600). */
function writeToken(file: string, dataDir: string): string {
  const token = randomBytes(24).toString('base64url');
  try {
    writeFileAtomic(file, `${token}\n`, 0o600, { exactMode: true, fsync: true });
  } catch (e) {
    throw dataDirProblem(dataDir, `writing the API token ${file}`, e);
  }
  return token;
}

/**
 * The API token: `--token-file`, else `<data-dir>/token`, generated at first start. A token
 * file must be a private regular file (no group or other access: refused with the `chmod`
 * that fixes it); a missing `--token-file` is explained with the command that makes one. A
 * generated token file found empty (a crash of the first start before the write reached the
 * disk, on versions that wrote it in place) is generated anew, with a warning: nobody can hold
 * an empty token.
 */
export function loadToken(
  tokenFile: string | undefined,
  dataDir: string,
  warn?: (message: string) => void,
): string {
  const given = tokenFile !== undefined;
  const file = tokenFile ?? join(dataDir, 'token');
  let text: string;
  try {
    text = readPrivateFile(file, 'token file');
  } catch (err) {
    const e = err as PrivatePathError;
    if (e.code !== 'ENOENT') throw new ServeError(e.message);
    if (given)
      throw new ServeError(
        `token file ${file} does not exist; create one with: ${makeToken(file)} (or leave out --token-file: serve then generates ${join(dataDir, 'token')})`,
      );
    return writeToken(file, dataDir);
  }
  const token = text.trim();
  if (token === '' && !given) {
    warn?.(
      `token file ${file} was empty (a first start cut short by a crash?); generated a new token`,
    );
    return writeToken(file, dataDir);
  }
  if (token.length < 16)
    throw new ServeError(
      `token file ${file} holds ${token.length} characters; a token needs at least 16 (make one with: ${makeToken(file)})`,
    );
  return token;
}

/**
 * Takes the data dir's `serve.lock` for the daemon's whole life (SPEC §9 item
 * 1): a second `serve` on the same data dir is refused at once, naming the
 * holder. The kernel releases the lock when the process dies.
 */
export async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  const { FlockBackend } = await import('../locks/flock.js');
  const locks = new FlockBackend(dataDir);
  let got;
  try {
    got = await locks.acquire('serve', {
      ttlMs: 0,
      holder: { pid: process.pid, host: hostIdentity(), acquiredAt: Date.now() },
    });
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    const code = /\b(EROFS|EACCES|EPERM)\b/.exec((err as Error).message)?.[1];
    if (code !== undefined)
      throw dataDirProblem(
        dataDir,
        'taking serve.lock',
        cause ?? Object.assign(err as Error, { code }),
      );
    throw new ServeError(`cannot lock data dir ${dataDir}: ${(err as Error).message}`);
  }
  if (!got.ok) {
    const h = got.holder;
    throw new ServeError(
      `data dir ${dataDir} is in use by another cronix serve` +
        (h ? ` (pid ${h.pid} on ${h.host})` : '') +
        '; stop it first or give this one another --data-dir',
    );
  }
  const lease = got.lease;
  return {
    async release() {
      await lease.release();
      await locks.close();
    },
  };
}
