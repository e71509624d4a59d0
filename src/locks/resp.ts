/**
 * The Redis connection of the lock backend: one TCP (or TLS) connection speaking RESP2,
 * commands answered in the order sent, failing closed.
 *
 * Written here rather than taken from ioredis for start-up time: the shim opens it on every
 * global-scope fire, and loading ioredis (its Cluster, Commander and Pipeline modules) cost
 * ~45 ms of CPU per process — about 40 % of a global-scope fire's own overhead (see
 * BENCHMARKS.md). This module loads only `node:net`/`node:tls` and is the whole protocol the
 * backend needs: AUTH, SELECT, PING, EVALSHA with EVAL on NOSCRIPT, GET, EXISTS, QUIT. Nothing
 * is retried or queued behind the caller's back: no reconnection, no offline queue. A command
 * past its deadline is rejected and keeps its place among the answers awaited, so a late answer
 * is never taken for the next command's; a reply that does not parse closes the connection.
 */
import { createHash } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** An error reply of the server (`-WRONGPASS …`, `-NOSCRIPT …`); `message` is its text. */
export class ReplyError extends Error {
  override name = 'ReplyError';
}

/** A decoded RESP2 reply. */
export type Reply = string | number | null | ReplyError | Reply[];

/** Where and how to connect. */
export interface RespOptions {
  host: string;
  port: number;
  /** TLS (`rediss://`); `servername` is sent for SNI when the host is a name. */
  tls?: { servername?: string } | undefined;
  username?: string | undefined;
  password?: string | undefined;
  /** Deadline for TCP, TLS and the AUTH/PING exchange, ms. */
  connectTimeoutMs: number;
  /** Deadline for each command's answer, ms. */
  commandTimeoutMs: number;
}

/** A Lua script run by its SHA1 (EVALSHA), loaded with EVAL when the server lacks it. */
export class Script {
  readonly sha: string;

  constructor(
    readonly lua: string,
    readonly keys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }
}

type Arg = string | number;

interface Pending {
  resolve(reply: Reply): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  /** Past its deadline: rejected already, its answer is still awaited (and dropped). */
  late: boolean;
}

/** Thrown when a reply does not parse: the stream can no longer be trusted. */
class ProtocolError extends Error {}

const CR = 0x0d;
const LF = 0x0a;
const TYPES = new Set([0x2b, 0x2d, 0x3a, 0x24, 0x2a]); // + - : $ *

/**
 * Parses one reply at `at`: the reply and where the next begins, or undefined when `buf`
 * does not hold all of it yet. Throws when the bytes are not RESP2.
 */
export function parseReply(buf: Buffer, at: number): { reply: Reply; next: number } | undefined {
  if (at >= buf.length) return undefined;
  const type = buf[at]!;
  if (!TYPES.has(type)) throw new ProtocolError(`unexpected reply type byte ${type}`);
  const eol = buf.indexOf(CR, at);
  if (eol < 0 || eol + 1 >= buf.length) return undefined;
  if (buf[eol + 1] !== LF) throw new ProtocolError('a reply line not ended by CRLF');
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  switch (type) {
    case 0x2b: // '+'
      return { reply: line, next };
    case 0x2d: // '-'
      return { reply: new ReplyError(line), next };
    case 0x3a: // ':'
      return { reply: integer(line), next };
    case 0x24: {
      // '$': the content is taken by its length, never searched for CR
      const n = integer(line);
      if (n < 0) return { reply: null, next };
      if (next + n + 2 > buf.length) return undefined;
      if (buf[next + n] !== CR || buf[next + n + 1] !== LF)
        throw new ProtocolError('a bulk string not ended by CRLF after its length');
      return { reply: buf.toString('utf8', next, next + n), next: next + n + 2 };
    }
    default: {
      // '*'
      const n = integer(line);
      if (n < 0) return { reply: null, next };
      const items: Reply[] = [];
      let pos = next;
      for (let i = 0; i < n; i++) {
        const item = parseReply(buf, pos);
        if (!item) return undefined;
        items.push(item.reply);
        pos = item.next;
      }
      return { reply: items, next: pos };
    }
  }
}

function integer(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new ProtocolError(`not an integer: ${text.slice(0, 40)}`);
  return Number(text);
}

/** One command in RESP: an array of bulk strings. */
function encode(args: readonly Arg[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.from(String(a), 'utf8');
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** One connection; see the module comment. */
export class RespConnection {
  /** `ready` once connected and authenticated, `end` once closed for any reason. */
  status: 'connecting' | 'ready' | 'end' = 'connecting';
  readonly #socket: Socket;
  readonly #pending: Pending[] = [];
  readonly #options: RespOptions;
  #buf: Buffer = Buffer.alloc(0);
  /** What ended the connection, if it ended other than by {@link quit}. */
  lastError: Error | undefined;

  private constructor(socket: Socket, options: RespOptions) {
    this.#socket = socket;
    this.#options = options;
    socket.setNoDelay(true);
    // a Redis that vanished (host down, state dropped by a NAT) is noticed on an idle connection
    socket.setKeepAlive(true, 30_000);
    socket.on('data', (chunk: Buffer) => this.#data(chunk));
    socket.on('error', (err: Error) => this.#fail(err));
    socket.on('close', () => this.#fail(new Error('Connection is closed.')));
  }

  /**
   * Connects, authenticates (AUTH [user] password) and checks the server answers (PING: a
   * server that wants a password answers NOAUTH) within `connectTimeoutMs`. Rejects with the
   * socket's error (`code` ECONNREFUSED …), the server's {@link ReplyError}, or a timeout.
   */
  static async open(options: RespOptions): Promise<RespConnection> {
    const { host, port, tls } = options;
    const socket = tls
      ? tlsConnect({ host, port, ...(tls.servername ? { servername: tls.servername } : {}) })
      : netConnect({ host, port });
    const conn = new RespConnection(socket, options);
    const connected = new Promise<void>((resolve, reject) => {
      socket.once(tls ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('Connection is closed.')));
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`timed out after ${options.connectTimeoutMs} ms`);
        conn.#fail(err);
        reject(err);
      }, options.connectTimeoutMs);
    });
    try {
      await Promise.race([connected, deadline]);
      const hello: Promise<Reply>[] = [];
      if (options.password !== undefined) {
        const auth: Arg[] = options.username
          ? ['AUTH', options.username, options.password]
          : ['AUTH', options.password];
        // a password for a server that has none is not an error (as redis-cli and ioredis)
        hello.push(conn.#send(auth, options.connectTimeoutMs).then(withoutPassword));
      }
      hello.push(conn.#send(['PING'], options.connectTimeoutMs));
      for (const p of hello) p.catch(() => undefined); // a failure is read below, in order
      // in order: a wrong password is WRONGPASS (AUTH), not the NOAUTH of the PING after it
      const inOrder = async (): Promise<void> => {
        for (const p of hello) orThrow(await p);
      };
      await Promise.race([inOrder(), deadline]);
      // the answers may have come with bytes that ended the connection in the same read
      if (conn.status === 'end') throw conn.lastError ?? new Error('Connection is closed.');
    } catch (err) {
      conn.disconnect();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    conn.status = 'ready';
    return conn;
  }

  /**
   * Ready, and no command is past its deadline unanswered: a server that answers nothing
   * (stopped, unreachable without a reset) makes this false at the first timeout, so a
   * long-lived user opens a new connection instead of queueing behind the silent one.
   */
  get healthy(): boolean {
    return this.status === 'ready' && !this.#pending.some((p) => p.late);
  }

  /** Sends a command; resolves with its reply, rejects with a {@link ReplyError} or a connection error. */
  async call(...args: Arg[]): Promise<Reply> {
    return orThrow(await this.#send(args, this.#options.commandTimeoutMs));
  }

  /** Runs `script` with `keys` and `args` (EVALSHA; EVAL when the server does not have it). */
  async eval(script: Script, keys: readonly Arg[], args: readonly Arg[]): Promise<Reply> {
    try {
      return await this.call('EVALSHA', script.sha, script.keys, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof ReplyError) || !err.message.startsWith('NOSCRIPT')) throw err;
      return this.call('EVAL', script.lua, script.keys, ...keys, ...args);
    }
  }

  /** Says goodbye (QUIT) and waits for the server to close; a hard close if that fails. */
  async quit(): Promise<void> {
    if (this.status === 'end') return;
    const closed = new Promise((r) => this.#socket.once('close', r));
    try {
      await this.call('QUIT');
      this.status = 'end';
      // the server closes after its OK; one that does not is closed on, after a command's deadline
      const timer = setTimeout(() => this.#socket.destroy(), this.#options.commandTimeoutMs);
      await closed;
      clearTimeout(timer);
    } catch {
      this.disconnect();
    }
  }

  /** Closes the connection at once; commands waiting are rejected. */
  disconnect(): void {
    this.#fail(new Error('Connection is closed.'));
  }

  #send(args: readonly Arg[], timeoutMs: number): Promise<Reply> {
    if (this.status === 'end' || this.#socket.destroyed)
      return Promise.reject(new Error('Connection is closed.'));
    const frame = encode(args); // before the entry is queued: no entry without its command
    return new Promise<Reply>((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject,
        late: false,
        // past the deadline the caller hears a timeout; the entry keeps its place in the queue,
        // so the late answer is taken for this command (and dropped: the promise is settled),
        // never for the next one
        timer: setTimeout(() => {
          entry.late = true;
          reject(new Error(`Command timed out after ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.#pending.push(entry);
      this.#socket.write(frame);
    });
  }

  #data(chunk: Buffer): void {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    let at = 0;
    try {
      for (;;) {
        const got = parseReply(this.#buf, at);
        if (!got) break;
        at = got.next;
        const waiting = this.#pending.shift();
        if (!waiting) throw new ProtocolError('a reply nobody asked for');
        clearTimeout(waiting.timer);
        waiting.resolve(got.reply);
      }
    } catch (err) {
      this.#fail(err as Error);
      return;
    }
    this.#buf = at === this.#buf.length ? Buffer.alloc(0) : this.#buf.subarray(at);
  }

  /** Ends the connection for `err`: every waiting command is rejected with it. */
  #fail(err: Error): void {
    if (this.status !== 'end') this.lastError = err;
    this.status = 'end';
    this.#socket.destroy();
    for (const p of this.#pending.splice(0)) {
      clearTimeout(p.timer);
      p.reject(err);
    }
  }
}

/** AUTH's answer when the server has no password: taken as OK. */
function withoutPassword(reply: Reply): Reply {
  return reply instanceof ReplyError &&
    /no password is set|without any password configured/.test(reply.message)
    ? 'OK'
    : reply;
}

function orThrow(reply: Reply): Reply {
  if (reply instanceof ReplyError) throw reply;
  return reply;
}
