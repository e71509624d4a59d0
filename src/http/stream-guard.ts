/**
 * Ends the responses that stay open — the event stream (`GET /api/v1/events`) and a followed run
 * output (`GET /api/v1/runs/{id}/log?follow=1`, `cronix logs -f`) — once the credential that
 * opened them stops holding: its token revoked or expired, its session logged out or expired
 * (SPEC §18). A request is authorized when it arrives; a response that flows for hours would
 * otherwise outlive a revocation for as long as its client keeps it open.
 *
 * - Every {@link STREAM_RECHECK_MS} the guard asks each open stream's credential again
 *   (`Access.credentialCheck`: the same token check as a request, through the token cache, so
 *   one store read per token per second at most, whatever the number of streams). The store
 *   holds the tokens, so a token revoked on another replica of a cluster ends this replica's
 *   streams too: within {@link STREAM_RECHECK_MS} plus the token cache (`TOKEN_CACHE_MS`).
 * - A revocation made on this replica asks at once ({@link StreamGuard.recheck}).
 * - A re-check that fails (the store does not answer) ends nothing and is asked again at the
 *   next tick: a request made meanwhile fails on its own, and a stream whose client reconnects
 *   is authorized afresh.
 * - The timer runs only while a stream is watched.
 */

/** How often the credential of an open stream is asked again. */
export const STREAM_RECHECK_MS = 5_000;

interface Watched {
  holds: () => Promise<boolean>;
  end: () => void;
}

/** The open streams of one API and the credential each was opened with. */
export class StreamGuard {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly everyMs: number = STREAM_RECHECK_MS) {}

  /** Streams watched now (tests, diagnostics). */
  get size(): number {
    return this.watched.size;
  }

  /**
   * Watches one stream: `end` is called once, when `holds()` answers false.
   * @returns the unwatch, for a stream that ended otherwise (idempotent)
   */
  watch(holds: () => Promise<boolean>, end: () => void): () => void {
    const w: Watched = { holds, end };
    this.watched.add(w);
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.recheck(), this.everyMs);
      this.timer.unref();
    }
    return () => this.forget(w);
  }

  /**
   * Asks every watched stream's credential again and ends those that no longer hold. Called
   * while a pass runs, it runs one more pass after it (a token revoked during a pass may have
   * been read before the revocation).
   */
  recheck(): Promise<void> {
    if (this.running !== null) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    await Promise.all(
      [...this.watched].map(async (w) => {
        let ok: boolean;
        try {
          ok = await w.holds();
        } catch {
          return; // the store did not answer: asked again at the next tick
        }
        if (ok || !this.watched.has(w)) return;
        this.forget(w);
        w.end();
      }),
    );
  }

  private forget(w: Watched): void {
    this.watched.delete(w);
    if (this.watched.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
