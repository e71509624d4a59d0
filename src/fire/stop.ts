/**
 * How a fire is told to stop: an `AbortSignal` (the shim's SIGTERM, the daemon's own shutdown)
 * or a {@link Stop}, the daemon's per-run one.
 *
 * Written here rather than an `AbortController` per run: a burst of 10,000 runs made 10,000
 * controllers, and each attempt added and removed an abort listener. In node 20 that is an
 * `AbortSignal` (an `EventTarget` with two `Map`s) and a listener record per run — ~750 bytes
 * kept while the run is in flight, and 6–10 µs of CPU per run (62–105 ms per 10,000, warm and
 * cold) — against ~80 bytes and under 1 µs for a {@link Stop}. Nearly no run is ever stopped, so
 * a real `AbortSignal` is made only when something asks for one ({@link asAbortSignal}).
 */

/** A listener of `abort`: a function or an object with `handleEvent`, as for an `EventTarget`. */
export type StopListener = (() => void) | { handleEvent(): void };

/** What stops a fire: everything the engine, transports and clocks use of it. */
export type StopSignal = AbortSignal | Stop;

/** A one-shot stop signal with the part of `AbortSignal`'s interface the fire's code uses. */
export class Stop {
  /** Whether {@link abort} was called. */
  aborted = false;
  private listeners: StopListener[] | null = null;
  private real: AbortController | null = null;

  /**
   * Adds a listener, called once on {@link abort}. As for an `AbortSignal`: none is added once
   * aborted, and one already added is not added again.
   */
  addEventListener(_type: 'abort', listener: StopListener, _options?: { once?: boolean }): void {
    if (this.aborted) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: StopListener): void {
    const listeners = this.listeners;
    if (listeners === null) return;
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  }

  /** Stops: tells every listener once, then the `AbortSignal` handed out, if any. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = null;
    let thrown: { error: unknown } | null = null;
    for (const l of listeners ?? []) {
      // every listener is told, even after one throws (the first error is thrown after)
      try {
        if (typeof l === 'function') l();
        else l.handleEvent();
      } catch (error) {
        thrown ??= { error };
      }
    }
    this.real?.abort();
    if (thrown) throw thrown.error;
  }

  /** An `AbortSignal` that aborts with this one (made on first use). */
  get signal(): AbortSignal {
    if (this.real === null) {
      this.real = new AbortController();
      if (this.aborted) this.real.abort();
    }
    return this.real.signal;
  }
}

/** `signal` as an `AbortSignal`, for what needs a real one (`AbortSignal.any`). */
export function asAbortSignal(signal: StopSignal): AbortSignal {
  return signal instanceof Stop ? signal.signal : signal;
}
