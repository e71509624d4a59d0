/**
 * A real local HTTP server for transport and engine tests, scripted per request: it records
 * exactly what arrived on the wire (method, target, headers, body bytes, timings, remote port)
 * and answers as the test's script says — a status, a dropped connection, a hang, or a large
 * body. Times named `*Perf` are `performance.now()` values of this process (precise, for
 * comparing with times taken in the test); the others are `Date.now()` (for child processes).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Answer with a status (after `delayMs`), optional body and headers. */
export interface RespondAction {
  status: number;
  body?: string | Buffer;
  headers?: Record<string, string>;
  delayMs?: number;
}

/**
 * Destroy the socket (after `delayMs`) without a response, or, with `status`, after sending
 * the head and `partialBody` of one.
 */
export interface DropAction {
  drop: true;
  delayMs?: number;
  status?: number;
  partialBody?: string;
}

/**
 * Never finish the response. With `status`, the head and `partialBody` are sent first, so the
 * client is left waiting in the body read; without, it is left waiting for headers.
 */
export interface HangAction {
  hang: true;
  status?: number;
  partialBody?: string;
}

/** Stream `bigBody` bytes of `a` (`Infinity`: until the client closes) with `status` (200). */
export interface BigBodyAction {
  bigBody: number;
  status?: number;
}

/** What the sink does with one request. */
export type SinkAction = RespondAction | DropAction | HangAction | BigBodyAction;

/** Decides the action for the request with 0-based arrival `index`, after its body arrived. */
export type SinkScript = (index: number, request: RecordedRequest) => SinkAction;

/** One request as the sink received it. */
export interface RecordedRequest {
  index: number;
  method: string;
  /** The request target exactly as sent (path and query). */
  url: string;
  /** Header names lower-cased by node; repeated headers joined. */
  headers: Record<string, string | string[] | undefined>;
  /** Names and values as on the wire, in order. */
  rawHeaders: string[];
  body: Buffer;
  bodyText: string;
  remotePort: number;
  /** 0-based id of the TCP connection, in accept order. */
  connectionId: number;
  /** `Date.now()` when the head arrived. */
  receivedAt: number;
  /** `performance.now()` when the head arrived. */
  receivedAtPerf: number;
  /** When the script ran (body fully received). */
  handlerStartPerf?: number;
  /** When the response finished, or the socket was dropped. */
  handlerEndPerf?: number;
  /** `Date.now()` when this request's connection closed (set once it does). */
  closedAt?: number;
  /** `performance.now()` when this request's connection closed (set once it does). */
  closedAtPerf?: number;
  /**
   * Resolves with {@link closedAt} (`Date.now()`, comparable with {@link receivedAt} and with
   * times taken in other processes) when the connection closes.
   */
  whenClosed: Promise<number>;
  /** Body bytes the sink wrote before the connection closed or the body ended. */
  bytesSent: number;
}

/** A running sink; see {@link startSink}. */
export interface Sink {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  /** Recorded requests in arrival order (live array). */
  requests: RecordedRequest[];
  /** Replaces the script for requests that arrive from now on. */
  setScript(script: SinkScript): void;
  /** Resolves once at least `n` requests arrived (heads); rejects after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** TCP connections open right now. */
  openConnections(): number;
  /** Resolves once exactly `n` connections are open; rejects after `timeoutMs`. */
  waitForOpenConnections(n: number, timeoutMs?: number): Promise<void>;
  /** Closes every connection and the listener. */
  close(): Promise<void>;
}

/** The default script: `200 ok`. */
const OK: SinkScript = () => ({ status: 200, body: 'ok' });

/**
 * Scripts a sequence of statuses or actions, counted from the first request the script sees
 * (so a sink shared by several tests can be re-scripted per test); past the end, the last
 * entry repeats.
 */
export function sequence(steps: readonly (number | SinkAction)[]): SinkScript {
  if (steps.length === 0) throw new Error('sequence() needs at least one step');
  let first: number | undefined;
  return (index) => {
    first ??= index;
    const step = steps[Math.min(index - first, steps.length - 1)] as number | SinkAction;
    return typeof step === 'number' ? { status: step, body: `status ${step}` } : step;
  };
}

export { freePort } from './common.js';

/** Starts a sink on 127.0.0.1, on `port` (default 0: an OS-chosen port). */
export async function startSink(script: SinkScript = OK, listenPort = 0): Promise<Sink> {
  let current = script;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const connectionIds = new WeakMap<Socket, number>();
  const changed = new Set<() => void>();
  const notify = (): void => changed.forEach((check) => check());
  let nextConnection = 0;

  const server = createServer((req, res) => {
    const socket = req.socket;
    let resolveClosed!: (at: number) => void;
    const record: RecordedRequest = {
      index: requests.length,
      method: req.method ?? '',
      url: req.url ?? '',
      headers: { ...req.headers },
      rawHeaders: [...req.rawHeaders],
      body: Buffer.alloc(0),
      bodyText: '',
      remotePort: socket.remotePort ?? 0,
      connectionId: connectionIds.get(socket) ?? -1,
      receivedAt: Date.now(),
      receivedAtPerf: performance.now(),
      whenClosed: new Promise<number>((resolve) => (resolveClosed = resolve)),
      bytesSent: 0,
    };
    const markClosed = (): void => {
      record.closedAtPerf ??= performance.now();
      record.closedAt ??= Date.now();
      resolveClosed(record.closedAt);
    };
    onSocketClose(socket, markClosed);
    requests.push(record);
    notify();

    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    req.on('end', () => {
      record.body = Buffer.concat(chunks);
      record.bodyText = record.body.toString('utf8');
      record.handlerStartPerf = performance.now();
      act(current(record.index, record), req, res, record);
    });
  });

  server.on('connection', (socket: Socket) => {
    connectionIds.set(socket, nextConnection++);
    sockets.add(socket);
    socket.on('error', () => undefined);
    onSocketClose(socket, () => {
      sockets.delete(socket);
      notify();
    });
    notify();
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  server.listen(listenPort, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  const waitFor = <T>(ready: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const check = (): void => {
        const value = ready();
        if (value === undefined) return;
        clearTimeout(timer);
        changed.delete(check);
        resolve(value);
      };
      const timer = setTimeout(() => {
        changed.delete(check);
        reject(new Error(`sink: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      changed.add(check);
      check();
    });

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setScript: (next) => {
      current = next;
    },
    waitForRequests: (n, timeoutMs = 5000) =>
      waitFor(
        () => (requests.length >= n ? requests : undefined),
        timeoutMs,
        `${n} request(s), have ${requests.length}`,
      ),
    openConnections: () => sockets.size,
    waitForOpenConnections: (n, timeoutMs = 5000) =>
      waitFor(
        () => (sockets.size === n ? true : undefined),
        timeoutMs,
        `${n} open connection(s), have ${sockets.size}`,
      ).then(() => undefined),
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

const closeCallbacks = new WeakMap<Socket, (() => void)[]>();

/**
 * Runs `fn` when `socket` closes (at once if it already has). One 'close' listener per socket,
 * however many requests a kept-alive connection carries.
 */
function onSocketClose(socket: Socket, fn: () => void): void {
  if (socket.destroyed) return fn();
  let callbacks = closeCallbacks.get(socket);
  if (callbacks === undefined) {
    const list: (() => void)[] = [];
    closeCallbacks.set(socket, list);
    socket.once('close', () => list.splice(0).forEach((run) => run()));
    callbacks = list;
  }
  callbacks.push(fn);
}

/** Carries out one action on one request. */
function act(
  action: SinkAction,
  req: IncomingMessage,
  res: ServerResponse,
  record: RecordedRequest,
): void {
  const socket = req.socket;
  res.on('error', () => undefined);
  const later = (delayMs: number | undefined, run: () => void): void => {
    if (!delayMs) return run();
    const timer = setTimeout(() => {
      if (!socket.destroyed) run();
    }, delayMs);
    onSocketClose(socket, () => clearTimeout(timer));
  };
  const ended = (): void => {
    record.handlerEndPerf = performance.now();
  };

  const head = (status: number | undefined, partialBody = ''): void => {
    if (status === undefined) return;
    res.writeHead(status, { 'content-length': String(Buffer.byteLength(partialBody) + 1000) });
    res.write(partialBody);
    record.bytesSent = Buffer.byteLength(partialBody);
  };
  if ('drop' in action) {
    head(action.status, action.partialBody);
    // Let the head reach the client before the connection goes.
    return later(action.delayMs ?? (action.status === undefined ? 0 : 20), () => {
      socket.destroy();
      ended();
    });
  }
  if ('hang' in action) return head(action.status, action.partialBody);
  if ('bigBody' in action) return streamBody(action, res, record, ended);
  later(action.delayMs, () => {
    const body = action.body ?? '';
    res.writeHead(action.status, {
      'content-length': String(Buffer.byteLength(body)),
      ...action.headers,
    });
    res.end(body, () => {
      record.bytesSent = Buffer.byteLength(body);
      ended();
    });
  });
}

/** Streams `a` bytes in 64 KiB chunks with backpressure until done or the client closes. */
function streamBody(
  action: BigBodyAction,
  res: ServerResponse,
  record: RecordedRequest,
  ended: () => void,
): void {
  const total = action.bigBody;
  const chunk = Buffer.alloc(64 * 1024, 'a');
  res.writeHead(
    action.status ?? 200,
    Number.isFinite(total) ? { 'content-length': String(total) } : {},
  );
  let closed = false;
  res.once('close', () => {
    closed = true;
    ended();
  });
  const pump = (): void => {
    while (!closed && record.bytesSent < total) {
      const size = Math.min(chunk.length, total - record.bytesSent);
      record.bytesSent += size;
      if (!res.write(size === chunk.length ? chunk : chunk.subarray(0, size))) {
        res.once('drain', pump);
        return;
      }
    }
    if (!closed) res.end();
  };
  pump();
}
