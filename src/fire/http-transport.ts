/**
 * The HTTP transport of the per-fire engine, on `node:http` / `node:https` (no third-party
 * client: the trigger shim starts once per fire and these are built in).
 *
 * One `send` is one request (SPEC §5.6): the deadline covers connect, headers and the body
 * read, and closes the connection when it passes; redirects are returned, never followed; the
 * response body is read up to `maxBodyBytes` and the rest is left unread. `send` never throws
 * or rejects: every outcome is a {@link TransportResult}.
 */
import http from 'node:http';
import type https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import type { SendOptions, Transport, TransportRequest, TransportResult } from './types.js';
import { urlTarget, type UrlTarget } from './url-target.js';
import {
  MAX_TIMER_MS,
  RUN_ONCE,
  describeError,
  networkError,
  requestHeaders,
} from './transport-parts.js';

/** Options of {@link createHttpTransport}. */
export interface HttpTransportOptions {
  /**
   * Keep connections open between sends and reuse them (the daemon). Default `false`: every
   * send opens a fresh connection and closes it after the response (the shim).
   */
  keepAlive?: boolean;
  /** Most concurrent connections per origin; default unlimited (node's default). */
  maxSockets?: number;
}

type HttpsModule = typeof https;
let httpsModule: Promise<HttpsModule> | undefined;

/** Loads `node:https` on first use: it costs start-up time the shim pays only for https URLs. */
function loadHttps(): Promise<HttpsModule> {
  httpsModule ??= import('node:https').then((m) => m.default);
  return httpsModule;
}

/**
 * Creates a {@link Transport} that sends each attempt with `node:http` / `node:https`.
 *
 * The transport owns its agents (one per protocol, created on first use): `close()` destroys
 * them and every connection they hold. The request's headers are sent as given, except
 * `Content-Length` / `Transfer-Encoding`, which the transport sets from the body
 * (`Content-Length`, also `0` for an empty body on methods that may carry one; none on GET and
 * the like). `Host` is added when absent; node adds `Connection`.
 */
export function createHttpTransport(options: HttpTransportOptions = {}): Transport {
  const agentOptions: http.AgentOptions = { keepAlive: options.keepAlive ?? false };
  if (options.maxSockets !== undefined) agentOptions.maxSockets = options.maxSockets;
  let httpAgent: http.Agent | undefined;
  let httpsAgent: https.Agent | undefined;
  let httpsLib: HttpsModule | undefined;

  /** The agent and module of a protocol; `node:https` is loaded on its first use. */
  const agentFor = (
    protocol: string,
  ): { agent: http.Agent; lib: HttpLib } | Promise<{ agent: http.Agent; lib: HttpLib }> => {
    if (protocol === 'http:') {
      httpAgent ??= new http.Agent(agentOptions);
      return { agent: httpAgent, lib: http };
    }
    if (httpsAgent !== undefined && httpsLib !== undefined)
      return { agent: httpsAgent, lib: httpsLib };
    return loadHttps().then((lib) => {
      httpsLib = lib;
      httpsAgent ??= new lib.Agent(agentOptions);
      return { agent: httpsAgent, lib };
    });
  };

  /** Sends one attempt through the protocol's agent. */
  const sendNow = async (
    request: TransportRequest,
    sendOptions: SendOptions,
  ): Promise<TransportResult> => {
    const target = urlTarget(request.url);
    if (typeof target === 'string') return { kind: 'network-error', message: target };
    try {
      // synchronous once the agent exists: sends reach the agent in the order they were made
      const picked = agentFor(target.protocol);
      const { agent, lib } = picked instanceof Promise ? await picked : picked;
      return await sendOnce(lib, agent, target, request, sendOptions);
    } catch (err) {
      // Only reachable through a bug or an exotic runtime failure: keep the promise resolving.
      return { kind: 'network-error', message: describeError(err) };
    }
  };

  let inFlight = 0;
  return {
    async send(request, sendOptions) {
      if (sendOptions.signal?.aborted) return { kind: 'aborted' };
      inFlight++;
      try {
        return await sendNow(request, sendOptions);
      } finally {
        inFlight--;
      }
    },
    inFlight: () => inFlight,
    backlog() {
      let waiting = 0;
      for (const agent of [httpAgent, httpsAgent])
        for (const queue of Object.values(agent?.requests ?? {})) waiting += queue?.length ?? 0;
      return waiting;
    },
    close() {
      httpAgent?.destroy();
      httpsAgent?.destroy();
      return Promise.resolve();
    },
  };
}

/** The `request` function of `node:http` or `node:https`. */
interface HttpLib {
  request(
    options: http.RequestOptions,
    callback: (res: http.IncomingMessage) => void,
  ): http.ClientRequest;
}

/** Sends one request and settles exactly once; every path destroys what it leaves unread. */
function sendOnce(
  lib: HttpLib,
  agent: http.Agent,
  target: UrlTarget,
  request: TransportRequest,
  options: SendOptions,
): Promise<TransportResult> {
  return new Promise<TransportResult>((resolve) => {
    const started = performance.now();
    const { signal } = options;
    let req: http.ClientRequest | undefined;
    let res: http.IncomingMessage | undefined;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;

    const settle = (result: TransportResult, destroy: boolean): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (destroy) {
        // Error listeners stay attached (they ignore late events), so destroying is safe.
        res?.destroy();
        req?.destroy();
      }
      resolve(result);
    };

    // Safety net: a close with no 'end' or 'error' must not wait for the deadline. Deferred,
    // because node emits the 'error' that explains a close on a later tick.
    const closedEarly = (what: string): void => {
      if (settled) return;
      setImmediate(() => {
        const message = `connection closed before the ${what} was read`;
        settle({ kind: 'network-error', message }, true);
      });
    };

    function onAbort(): void {
      settle({ kind: 'aborted' }, true);
    }

    // setTimeout may fire a little early by the loop's cached clock: re-arm until the full
    // deadline has passed, so an attempt always gets at least `timeoutMs`.
    const timeoutMs = Number.isNaN(options.timeoutMs) ? 0 : options.timeoutMs;
    const armDeadline = (): void => {
      const left = timeoutMs - (performance.now() - started);
      if (left <= 0) return settle({ kind: 'timeout' }, true);
      timer = setTimeout(armDeadline, Math.min(Math.ceil(left), MAX_TIMER_MS));
    };

    if (signal?.aborted) return settle({ kind: 'aborted' }, false);
    signal?.addEventListener('abort', onAbort, { once: true });
    armDeadline();
    if (settled) return;

    const body = Buffer.from(request.body, 'utf8');
    const requestOptions: http.RequestOptions = {
      protocol: target.protocol,
      hostname: target.hostname,
      path: target.path,
      method: request.method,
      headers: requestHeaders(target, request, body.length),
      agent,
    };
    if (target.port !== '') requestOptions.port = Number(target.port);
    try {
      req = lib.request(requestOptions, (response) => {
        res = response;
        response.on('error', (err) => settle(networkError(err, 'response body'), true));
        response.on('close', () => closedEarly('response body'));
        readExcerpt(response, options.maxBodyBytes, (excerpt, complete) => {
          const location = response.headers.location;
          const result: TransportResult = {
            kind: 'response',
            status: response.statusCode ?? 0,
            bodyExcerpt: excerpt,
          };
          if (location !== undefined) result.location = location;
          const runOnce = response.headers[RUN_ONCE];
          if (typeof runOnce === 'string') result.runOnce = runOnce;
          // A complete body leaves the connection reusable; a capped one is cut off unread.
          settle(result, !complete);
        });
      });
    } catch (err) {
      // Invalid method or header (e.g. a control character) is thrown synchronously by node.
      return settle(
        { kind: 'network-error', message: `invalid request: ${describeError(err)}` },
        true,
      );
    }
    req.on('error', (err) => settle(networkError(err, undefined), true));
    req.on('close', () => {
      if (res === undefined) closedEarly('response');
    });
    req.end(body.length > 0 ? body : undefined);
  });
}

/**
 * Reads up to `maxBytes` of the body, then stops reading. Calls `done` once with the UTF-8
 * excerpt (an incomplete trailing character of a capped body is dropped, so the excerpt is at
 * most `maxBytes` bytes) and whether the body was read to its end.
 */
function readExcerpt(
  response: http.IncomingMessage,
  maxBytes: number,
  done: (excerpt: string, complete: boolean) => void,
): void {
  const decoder = new StringDecoder('utf8');
  const limit = Math.max(0, Math.floor(maxBytes));
  let text = '';
  let kept = 0;
  let finished = false;
  const finish = (complete: boolean): void => {
    if (finished) return;
    finished = true;
    response.removeListener('data', onData);
    if (complete) text += decoder.end();
    done(text, complete);
  };
  function onData(chunk: Buffer): void {
    const take = Math.min(chunk.length, limit - kept);
    if (take > 0) text += decoder.write(take === chunk.length ? chunk : chunk.subarray(0, take));
    kept += take;
    if (kept >= limit && take < chunk.length) finish(false);
  }
  response.on('data', onData);
  response.on('end', () => finish(true));
  // Nothing to keep: do not wait for a body that may be large or never end.
  if (limit === 0) finish(false);
}
