/**
 * The lock backend's own RESP2 connection (`src/locks/resp.ts`): replies split at any byte
 * (a server of our own writing generated replies in random pieces), answers kept in order
 * across a timed-out command, an unparsable reply closing the connection, and EVAL when the
 * real server's script cache lost a script.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/locks/index.js';
import { LOCK_SCRIPTS } from '../../src/locks/redis-scripts.js';
import { parseReply, type Reply, ReplyError, RespConnection } from '../../src/locks/resp.js';
import { HOLDER_A, mustAcquire } from './contract.js';
import { deleteKeys, randomPrefix, sharedRedis } from './helpers.js';

/** A reply as a server writes it, and what the client must make of it. */
interface Wire {
  bytes: string;
  value: Reply;
}

const bulk = (v: string): Wire => ({ bytes: `$${Buffer.byteLength(v)}\r\n${v}\r\n`, value: v });
const array = (items: Wire[]): Wire => ({
  bytes: `*${items.length}\r\n${items.map((i) => i.bytes).join('')}`,
  value: items.map((i) => i.value),
});
/** Text with the bytes RESP uses itself: CR, LF, CRLF, type bytes, lengths. */
const tricky = fc
  .array(
    fc.oneof(
      fc.constantFrom('\r', '\n', '\r\n', '$1\r\n', '*2\r\n', '-ERR', ':1', '+OK'),
      fc.string({ unit: 'grapheme', maxLength: 3 }),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(''));
const line = fc.string({ unit: 'grapheme' }).filter((v) => !/[\r\n]/.test(v));

const wireArb: fc.Arbitrary<Wire> = fc.letrec<{ wire: Wire }>((tie) => ({
  wire: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tricky.map(bulk),
    line.map((v) => ({ bytes: `+${v}\r\n`, value: v })),
    fc
      .integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 })
      .map((v) => ({ bytes: `:${v}\r\n`, value: v })),
    fc.constant({ bytes: '$-1\r\n', value: null }),
    fc.constant({ bytes: '*-1\r\n', value: null }),
    line.map((v) => ({ bytes: `-ERR ${v}\r\n`, value: new ReplyError(`ERR ${v}`) })),
    fc.array(tie('wire'), { maxLength: 4 }).map(array),
  ),
})).wire;

/**
 * A server of our own: each command (one per write the client makes, so one per `call`) is
 * answered by `answer`, which writes raw bytes when and how it likes.
 */
async function fakeServer(
  answer: (socket: Socket, command: number) => void | Promise<void>,
): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    let n = 0;
    socket.on('data', (chunk: Buffer) => {
      // the hello (PING) and each call arrive as one write each; count the commands in it
      const commands = chunk.toString('latin1').match(/^\*\d+\r\n/gm)?.length ?? 0;
      for (let i = 0; i < commands; i++) void answer(socket, n++);
    });
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

const open = (port: number, commandTimeoutMs = 2000): Promise<RespConnection> =>
  RespConnection.open({ host: '127.0.0.1', port, connectTimeoutMs: 2000, commandTimeoutMs });

describe('RespConnection', () => {
  it('parses every prefix of generated replies: nothing early, nothing wrong, all at the end', () => {
    fc.assert(
      fc.property(fc.array(wireArb, { minLength: 1, maxLength: 5 }), (wires) => {
        const bytes = Buffer.from(wires.map((w) => w.bytes).join(''), 'utf8');
        for (let cut = 0; cut <= bytes.length; cut++) {
          const part = bytes.subarray(0, cut);
          const got: Reply[] = [];
          let at = 0;
          for (let r = parseReply(part, at); r; r = parseReply(part, at)) {
            got.push(r.reply);
            at = r.next;
          }
          expect(got).toEqual(wires.slice(0, got.length).map((w) => w.value));
          if (cut === bytes.length) expect(got).toHaveLength(wires.length);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('bytes that are not RESP2 are refused, not read as another reply', () => {
    for (const bad of ['?x\r\n', '+OK\rX', '$3\r\nabcd\r\n', ':12a\r\n', '*1\r\n!\r\n'])
      expect(() => parseReply(Buffer.from(bad), 0), bad).toThrow();
  });

  it('decodes generated replies sent in random pieces over a socket (200 batches)', async () => {
    let script: { bytes: Buffer; cuts: number[] } = { bytes: Buffer.alloc(0), cuts: [] };
    const { server, port } = await fakeServer(async (socket, n) => {
      if (n === 0) return void socket.write('+PONG\r\n');
      if (n !== 1) return;
      // the answers to the whole batch, cut at the generated offsets, a tick apart
      let at = 0;
      for (const cut of [...script.cuts, script.bytes.length]) {
        socket.write(script.bytes.subarray(at, cut));
        at = cut;
        await new Promise((r) => setImmediate(r));
      }
    });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(wireArb, { minLength: 1, maxLength: 6 }),
          fc.array(fc.nat(), { maxLength: 8 }),
          async (wires, cutsRaw) => {
            const replies = wires.map((w) => w.value);
            const bytes = Buffer.from(wires.map((w) => w.bytes).join(''), 'utf8');
            const cuts = [...new Set(cutsRaw.map((c) => c % bytes.length))].sort((a, b) => a - b);
            script = { bytes, cuts };
            const conn = await open(port);
            try {
              // one write with every command, so the fake answers the batch at once
              const got = await Promise.allSettled(replies.map(() => conn.call('X')));
              const seen = got.map((g) => (g.status === 'fulfilled' ? g.value : g.reason));
              expect(seen).toEqual(replies);
            } finally {
              conn.disconnect();
            }
          },
        ),
        { numRuns: 200 },
      );
    } finally {
      server.close();
    }
  });

  it('a command past its deadline is rejected, and its late answer is not taken for the next one', async () => {
    let hold: Socket | undefined;
    const { server, port } = await fakeServer((socket, n) => {
      if (n === 0) socket.write('+PONG\r\n');
      if (n === 1) hold = socket; // answered only once the next command is in
      // both answers in one piece: the late one first, as a server answers in order
      if (n === 2) hold?.write('$4\r\nlate\r\n$4\r\nmine\r\n');
    });
    try {
      const conn = await open(port, 100);
      await expect(conn.call('GET', 'slow')).rejects.toThrow('Command timed out after 100 ms');
      expect(conn.healthy).toBe(false); // a user that lives on opens a new connection
      expect(await conn.call('GET', 'next')).toBe('mine');
      expect(conn.status).toBe('ready');
      expect(conn.healthy).toBe(true); // the late answer came
      conn.disconnect();
    } finally {
      server.close();
    }
  });

  it('a reply that does not parse closes the connection and fails what waits', async () => {
    const { server, port } = await fakeServer((socket, n) => {
      socket.write(n === 0 ? '+PONG\r\n' : '?what\r\n');
    });
    try {
      const conn = await open(port);
      await expect(conn.call('GET', 'k')).rejects.toThrow(/unexpected reply type/);
      expect(conn.status).toBe('end');
      await expect(conn.call('GET', 'k')).rejects.toThrow('Connection is closed.');
    } finally {
      server.close();
    }
  });

  it('a hello answered together with bytes that are not RESP2 fails the connect', async () => {
    const { server, port } = await fakeServer((socket, n) => {
      if (n === 0) socket.write('+PONG\r\n?junk\r\n');
    });
    try {
      await expect(open(port)).rejects.toThrow(/unexpected reply type/);
    } finally {
      server.close();
    }
  });

  it('quit returns when the server answers OK but never closes', async () => {
    const { server, port } = await fakeServer((socket) => void socket.write('+OK\r\n'));
    try {
      const conn = await open(port, 200);
      await conn.quit(); // bounded by the command deadline, not by the server
      expect(conn.status).toBe('end');
    } finally {
      server.close();
    }
  });

  it('a server that never answers the hello fails the connect within its deadline', async () => {
    const { server, port } = await fakeServer(() => undefined);
    try {
      // the message names the deadline given (not the 2 s default); a hang fails the test's timeout
      await expect(
        RespConnection.open({
          host: '127.0.0.1',
          port,
          connectTimeoutMs: 200,
          commandTimeoutMs: 200,
        }),
      ).rejects.toThrow(/timed out after 200 ms/);
    } finally {
      server.close();
    }
  });
});

describe('scripts on a real Redis', () => {
  let redis: { url: string; stop: () => Promise<void> };
  let raw: Redis;
  const prefix = randomPrefix();
  beforeAll(async () => {
    redis = await sharedRedis();
    raw = new Redis(redis.url);
  });
  afterAll(async () => {
    await deleteKeys(raw, prefix);
    await raw.quit();
    await redis.stop();
  });

  it('a password in the URL of a server without one is accepted (as redis-cli does)', async () => {
    const url = new URL(redis.url);
    url.password = 'not-needed';
    const backend = await RedisBackend.connect(url.toString(), { prefix });
    expect(backend.connected).toBe(true);
    await backend.close();
  });

  it('a script the server lost (SCRIPT FLUSH) is sent again with EVAL, and cached from then on', async () => {
    const backend = await RedisBackend.connect(redis.url, { prefix });
    await raw.script('FLUSH');
    expect(await raw.script('EXISTS', LOCK_SCRIPTS.acquire.sha)).toEqual([0]);
    const lease = await mustAcquire(backend, 'flushed.job', HOLDER_A);
    expect(await raw.script('EXISTS', LOCK_SCRIPTS.acquire.sha)).toEqual([1]);
    expect(await lease.release()).toBe(true);
    await backend.close();
    expect(backend.connected).toBe(false);
  });
});
