/**
 * sd_notify(3) for `cronix serve` under systemd `Type=notify`: READY=1 once the daemon listens
 * and has scheduled, RELOADING=1 / READY=1 around a reload, STOPPING=1 on shutdown, WATCHDOG=1
 * every half `WatchdogSec`. Nothing is loaded or sent unless `$NOTIFY_SOCKET` is set.
 *
 * Why a native module (`unix-dgram`, an optional dependency, loaded only here): the message
 * goes over an AF_UNIX SOCK_DGRAM socket, which Node cannot open. The alternatives measured
 * (docs/systemd.md): a `systemd-notify` child per message needs `NotifyAccess=all` (the sender
 * is not the main PID) and, on Debian's systemd 252, waits on its barrier; with `--no-block`
 * the child may exit before systemd reads the message, which it then cannot attribute to the
 * unit. The module is ~200 lines of C by a Node core maintainer and builds with the same
 * toolchain as better-sqlite3.
 */
import { createRequire } from 'node:module';

/** The socket half of `unix-dgram` the notifier uses. */
interface DgramSocket {
  send(buf: Buffer, offset: number, length: number, path: string, cb: (err?: Error) => void): void;
  close(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** Sends state changes to systemd; every method is a no-op after {@link SystemdNotifier.close}. */
export interface SystemdNotifier {
  /** READY=1 with a STATUS= line; starts the watchdog pings when `WATCHDOG_USEC` is set. */
  ready(status: string): void;
  reloading(): void;
  /** STOPPING=1; stops the watchdog pings. */
  stopping(status: string): void;
  /** Closes the socket (it would keep the process alive otherwise). */
  close(): void;
}

/** How to load the datagram module (tests replace it to prove the failure path). */
export type DgramLoader = () => { createSocket(type: 'unix_dgram'): DgramSocket };

const loadUnixDgram: DgramLoader = () =>
  createRequire(import.meta.url)('unix-dgram') as ReturnType<DgramLoader>;

/**
 * The notifier for this process's environment, or `null` when `$NOTIFY_SOCKET` is unset or
 * cannot be used (the reason goes to `warn`: systemd will then time the start-up out, so say
 * why).
 */
export function systemdNotifier(
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
  load: DgramLoader = loadUnixDgram,
): SystemdNotifier | null {
  const path = env['NOTIFY_SOCKET'];
  if (path === undefined || path === '') return null;
  if (!path.startsWith('/')) {
    warn(
      `NOTIFY_SOCKET=${JSON.stringify(path.slice(0, 200))} is not a socket path (abstract sockets are not supported); systemd will not hear that cronix is ready`,
    );
    return null;
  }
  let socket: DgramSocket;
  try {
    socket = load().createSocket('unix_dgram');
  } catch (err) {
    warn(
      `NOTIFY_SOCKET is set but the unix-dgram module cannot be loaded (${(err as Error).message.split('\n')[0]?.slice(0, 200)}); install cronix with its optional dependencies and a C++ toolchain, or use Type=simple`,
    );
    return null;
  }
  socket.on('error', (err) => warn(`systemd notification failed: ${err.message}`));
  let open = true;
  let watchdog: NodeJS.Timeout | undefined;
  const send = (message: string): void => {
    if (!open) return;
    const buf = Buffer.from(message);
    socket.send(buf, 0, buf.length, path, (err) => {
      if (err) warn(`systemd notification failed: ${err.message}`);
    });
  };
  const usec = Number(env['WATCHDOG_USEC']);
  const pid = env['WATCHDOG_PID'];
  const watchdogMs =
    Number.isFinite(usec) && usec > 0 && (pid === undefined || Number(pid) === process.pid)
      ? Math.max(Math.floor(usec / 2000), 100)
      : null;
  const oneLine = (s: string): string => s.replace(/[\r\n]+/g, ' ').slice(0, 400);
  return {
    ready(status) {
      send(`READY=1\nSTATUS=${oneLine(status)}\nMAINPID=${process.pid}`);
      if (watchdogMs !== null && watchdog === undefined) {
        watchdog = setInterval(() => send('WATCHDOG=1'), watchdogMs);
        watchdog.unref();
      }
    },
    reloading() {
      send('RELOADING=1');
    },
    stopping(status) {
      clearInterval(watchdog);
      send(`STOPPING=1\nSTATUS=${oneLine(status)}`);
    },
    close() {
      if (!open) return;
      open = false;
      clearInterval(watchdog);
      socket.close();
    },
  };
}
