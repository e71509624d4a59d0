/**
 * A TCP proxy inside the test, to cut a process's connections to a server
 * without touching the server: `cut()` destroys every open connection and
 * refuses new ones until `restore()`.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  port: number;
  /** Destroys every open connection; with `refuse`, new ones are refused until restore(). */
  cut(refuse?: boolean): void;
  restore(): void;
  close(): Promise<void>;
}

/** Proxies 127.0.0.1:<port> → `targetHost:targetPort`. */
export async function startTcpProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut(refuse = true) {
      refusing = refuse;
      for (const s of open) s.destroy();
      open.clear();
    },
    restore() {
      refusing = false;
    },
    close() {
      for (const s of open) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
