/**
 * Logged-out web sessions, kept in the data dir (`<data-dir>/sessions-revoked.json`, mode 0600)
 * so that a cookie ended by **Log out** stays refused after a restart. Sessions are stateless
 * (an HMAC under a key derived from the token, `session.ts`), so the only state is this list:
 * `{"v":1,"revoked":{"<nonce>":<expiry, Unix seconds>}}`. An entry is dropped once its
 * session would have expired anyway; at most {@link MAX_REVOKED} are kept (the soonest to
 * expire dropped first — a daemon that sees more logouts than that within 12 hours should
 * change its token, which ends every session).
 *
 * The file is replaced atomically and fsynced (temp file, fsync, rename, fsync of the
 * directory), so a power cut leaves the old list or the new one. A missing or unreadable file
 * means no revocations (a first start); a file that is not ours is never trusted beyond its
 * well-formed entries.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../io/atomic.js';

/** Most revocations kept. */
export const MAX_REVOKED = 100_000;

/** Where revocations live between restarts. */
export interface RevocationStore {
  /** The revocations still in force: nonce → expiry (epoch ms). */
  load(): Map<string, number>;
  /**
   * Replaces the kept list with `revoked`.
   * @throws the file system's error when it cannot be written
   */
  save(revoked: ReadonlyMap<string, number>): void;
}

const NONCE = /^[A-Za-z0-9_-]{24}$/;

/** Revocations in `path`, dropping those that expired before `now()`. */
export function fileRevocations(path: string, now: () => number = Date.now): RevocationStore {
  return {
    load() {
      const out = new Map<string, number>();
      let parsed: unknown;
      try {
        parsed = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        return out; // none yet, or unreadable: nothing to honour
      }
      const revoked = (parsed as { revoked?: unknown } | null)?.revoked;
      if (typeof revoked !== 'object' || revoked === null) return out;
      const t = now();
      for (const [nonce, exp] of Object.entries(revoked as Record<string, unknown>)) {
        if (NONCE.test(nonce) && typeof exp === 'number' && exp * 1000 > t)
          out.set(nonce, exp * 1000);
      }
      return out;
    },
    save(revoked) {
      const t = now();
      let live = [...revoked].filter(([, exp]) => exp > t);
      if (live.length > MAX_REVOKED) live = live.sort((a, b) => b[1] - a[1]).slice(0, MAX_REVOKED);
      const body: Record<string, number> = {};
      for (const [nonce, exp] of live) body[nonce] = Math.ceil(exp / 1000);
      writeFileAtomic(path, `${JSON.stringify({ v: 1, revoked: body })}\n`, 0o600, {
        exactMode: true,
        fsync: true,
      });
    },
  };
}
