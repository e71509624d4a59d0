/**
 * The daemon's HTTP transport, on undici's `Agent` through its dispatch API: one handler object
 * per request, no streams and no promise per phase. The same contract as
 * `createHttpTransport`'s keep-alive mode (http-transport.ts) (SPEC §5.6): one `send` is one request; the
 * deadline covers the wait for a connection, connect, headers and the body read, and closes the
 * connection when it passes; redirects are returned, never followed; the body is read up to
 * `maxBodyBytes` and the connection is cut when there is more. `send` never throws or rejects.
 *
 * Why undici in the daemon and `node:http` in the shim: at a burst of thousands of fires the
 * daemon's time went mostly to node's HTTP client (ClientRequest, OutgoingMessage, the JS header
 * parser's objects); undici's client sends the same requests with a fraction of the allocation
 * (BENCHMARKS.md, "Dispatch"). The shim sends one request per process and loads `node:http`
 * faster than undici's bundle.
 */
import { StringDecoder } from 'node:string_decoder';
import { setFlagsFromString } from 'node:v8';
import { Agent, type Dispatcher } from 'undici';
import type { SendOptions, Transport, TransportRequest, TransportResult } from './types.js';
import { urlTarget, type UrlTarget } from './url-target.js';
import {
  MAX_TIMER_MS,
  RUN_ONCE,
  describeError,
  networkError,
  requestHeaders,
} from './transport-parts.js';

/** Options of {@link createUndiciTransport}. */
export interface UndiciTransportOptions {
  /** Most connections per origin (undici's `connections`); default unlimited. */
  maxSockets?: number;
}

/**
 * Keeps this process's WebAssembly on V8's baseline compiler (Liftoff): undici parses every
 * response with llhttp compiled to wasm, and the tier-up of its main function (34 KB of wasm) to
 * TurboFan, which comes in a burst's first few thousand replies, took ~105 ms of compile on the
 * other core and ~30 MB of compiler memory (42 MB in all) — the daemon's RSS rose by that much
 * for the moment. Measured without it (BENCHMARKS.md): the same p99 in steady state and a lower
 * one at a first burst. To be called before the first connection (the module is compiled then,
 * and its tiering with it); process-wide: the daemon runs no other WebAssembly.
 */
export function keepWasmOnBaseline(): void {
  setFlagsFromString('--liftoff-only');
}

/** undici's code for an argument it refuses (a bad method, header name or value). */
const INVALID_ARGUMENT = 'UND_ERR_INVALID_ARG';

/** The reason given to undici when the transport ends a request itself. */
const ENDED = new Error('ended by the transport');

/**
 * Creates a keep-alive {@link Transport} on one undici `Agent` (a pool per origin, one request
 * per connection at a time). `close()` destroys the agent and every connection it holds.
 */
export function createUndiciTransport(options: UndiciTransportOptions = {}): Transport {
  const agent = new Agent({ connections: options.maxSockets ?? null, pipelining: 1 });
  const counter = { inFlight: 0 };
  return {
    send(request, sendOptions) {
      if (sendOptions.signal?.aborted) return Promise.resolve({ kind: 'aborted' });
      const target = urlTarget(request.url);
      if (typeof target === 'string')
        return Promise.resolve({ kind: 'network-error', message: target });
      counter.inFlight++;
      return new Promise<TransportResult>((resolve) => {
        new Attempt(counter, resolve, sendOptions).start(agent, target, request);
      });
    },
    inFlight: () => counter.inFlight,
    backlog() {
      let waiting = 0;
      // a pool per origin (connections > 1) or a client (connections: 1): queued behind the
      // running requests, either way
      for (const stats of Object.values(agent.stats)) waiting += stats.size - stats.running;
      return waiting;
    },
    close: () => agent.destroy(),
  };
}

/** Fires an attempt's deadline: a module function, so arming it allocates no closure. */
function onDeadline(attempt: Attempt): void {
  attempt.armDeadline();
}

/**
 * One request: undici's handler (legacy callbacks, which undici calls directly with the raw
 * header list, unparsed), the deadline and the abort signal's listener (`handleEvent`).
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timeoutMs: number;
  private readonly limit: number;
  private abort: ((err: Error) => void) | null = null;
  private timer: NodeJS.Timeout | undefined;
  private settled = false;
  private status = 0;
  private location: string | undefined;
  private runOnce: string | undefined;
  private decoder: StringDecoder | null = null;
  private text = '';
  private kept = 0;

  constructor(
    private readonly counter: { inFlight: number },
    private readonly resolve: (result: TransportResult) => void,
    private readonly options: SendOptions,
  ) {
    this.timeoutMs = Number.isNaN(options.timeoutMs) ? 0 : options.timeoutMs;
    this.limit = Math.max(0, Math.floor(options.maxBodyBytes));
  }

  start(agent: Agent, target: UrlTarget, request: TransportRequest): void {
    this.options.signal?.addEventListener('abort', this, { once: true });
    this.armDeadline();
    if (this.settled) return;
    const body = request.body === '' ? null : Buffer.from(request.body, 'utf8');
    try {
      agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: request.method,
          headers: requestHeaders(target, request, body?.length ?? 0),
          body,
          // the deadline is the transport's own; undici's phase timers stay out of its way
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        this,
      );
    } catch (err) {
      this.onError(err as Error);
    }
  }

  /** Re-arms until the full deadline has passed (a timer may fire early by the loop's clock). */
  armDeadline(): void {
    const left = this.timeoutMs - (performance.now() - this.started);
    if (left <= 0) return this.settle({ kind: 'timeout' }, true);
    this.timer = setTimeout(onDeadline, Math.min(Math.ceil(left), MAX_TIMER_MS), this);
  }

  /** The abort signal's listener. */
  handleEvent(): void {
    this.settle({ kind: 'aborted' }, true);
  }

  private settle(result: TransportResult, cut: boolean): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this);
    // a request still waiting for a connection is cut when it reaches one (onConnect)
    if (cut) this.abort?.(ENDED);
    this.counter.inFlight--;
    this.resolve(result);
  }

  private response(complete: boolean): void {
    if (complete && this.decoder !== null) this.text += this.decoder.end();
    const result: TransportResult = {
      kind: 'response',
      status: this.status,
      bodyExcerpt: this.text,
    };
    if (this.location !== undefined) result.location = this.location;
    if (this.runOnce !== undefined) result.runOnce = this.runOnce;
    // a complete body leaves the connection reusable; a capped one is cut off unread
    this.settle(result, !complete);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort(ENDED);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true;
    this.status = statusCode;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i] as Buffer;
      if (name.length !== 8 && name.length !== RUN_ONCE.length) continue;
      const lower = name.toString('latin1').toLowerCase();
      if (lower === 'location') this.location = (rawHeaders[i + 1] as Buffer).toString('latin1');
      else if (lower === RUN_ONCE) this.runOnce = (rawHeaders[i + 1] as Buffer).toString('latin1');
    }
    // nothing to keep: do not wait for a body that may be large or never end
    if (this.limit === 0) this.response(false);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return true;
    const take = Math.min(chunk.length, this.limit - this.kept);
    if (take > 0) {
      this.decoder ??= new StringDecoder('utf8');
      this.text += this.decoder.write(take === chunk.length ? chunk : chunk.subarray(0, take));
    }
    this.kept += take;
    if (this.kept >= this.limit && take < chunk.length) this.response(false);
    return true;
  }

  onComplete(): void {
    if (!this.settled) this.response(true);
  }

  onError(err: Error): void {
    if (this.settled) return;
    const code = (err as NodeJS.ErrnoException).code;
    const result =
      code === INVALID_ARGUMENT
        ? { kind: 'network-error' as const, message: `invalid request: ${describeError(err)}` }
        : networkError(err, this.status === 0 ? undefined : 'response body');
    this.settle(result, false);
  }
}
