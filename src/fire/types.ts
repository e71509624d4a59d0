/**
 * Seams of the per-fire engine: the transport that sends one HTTP attempt, the
 * command runner that runs one command attempt (SPEC §11), and the clock that
 * tells time and sleeps. All are injected, so the shim and the daemon run the
 * same engine and tests run it on a fake clock.
 */
import type { StopSignal } from './stop.js';

/** One HTTP attempt as sent on the wire. */
export interface TransportRequest {
  method: string;
  url: string;
  /** Final headers (static headers, then the injected `X-Cron-*` ones). */
  headers: Record<string, string>;
  /** Body bytes, sent verbatim (empty string = no body). */
  body: string;
}

/** Options of one attempt. */
export interface SendOptions {
  /** The attempt's deadline in ms from now: the connection is closed at the deadline. */
  timeoutMs: number;
  /** Response body bytes to keep (64 KiB); the rest is not read. */
  maxBodyBytes: number;
  /** Aborts the attempt (daemon Replace / cancel, shim SIGTERM). */
  signal?: StopSignal;
}

/** What one attempt produced. Never an exception. */
export type TransportResult =
  | {
      kind: 'response';
      status: number;
      bodyExcerpt: string;
      location?: string;
      /**
       * The app's `X-Cron-Run-Once` answer header (the SDK's `runOnce`): `duplicate` when the
       * app had already done this run key and sent its stored answer instead of doing it again.
       */
      runOnce?: string;
    }
  | { kind: 'network-error'; message: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

/** Sends one attempt. Redirects are not followed; the body read is capped. */
export interface Transport {
  send(request: TransportRequest, options: SendOptions): Promise<TransportResult>;
  /**
   * Requests handed to `send` that are still waiting for a connection (a burst's backlog). May
   * still count, for a while, one that timed out or was aborted while it waited.
   */
  backlog?(): number;
  /** Requests handed to `send` whose result has not come back yet (waiting ones included). */
  inFlight?(): number;
  /** Closes pooled connections. */
  close?(): Promise<void>;
}

/** Time, injected. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Sleeps `ms`; resolves early (false) when `signal` aborts, true otherwise. */
  sleep(ms: number, signal?: StopSignal): Promise<boolean>;
}

/** One command attempt as the OS runs it (SPEC §11): no shell, exactly this environment. */
export interface CommandRequest {
  argv: readonly string[];
  /** The whole environment of the process; nothing else of the caller's is inherited. */
  env: Readonly<Record<string, string>>;
  /** Absolute working directory. */
  cwd: string;
  /** When the attempt is stopped: ms between SIGTERM and SIGKILL to its process group. */
  gracefulStopMs: number;
  /**
   * Gives the process a lifeline as file descriptor 3: one end of a socket pair whose other end
   * only this process holds, so it reads end-of-file once this process is gone, however it
   * died (a supervised service watches it, SPEC §17). Absent: no fd 3.
   */
  lifeline?: boolean;
}

/** Which stream a chunk of output came from. */
export type OutputStream = 'stdout' | 'stderr';

/** Where a command's output goes, for the whole fire (every attempt). */
export interface OutputSink {
  /** Attempt `n` is about to start. */
  attempt(n: number): void;
  /** A chunk of the running attempt's output, as it arrives. */
  write(stream: OutputStream, chunk: Buffer): void;
  /** Attempt `n` ended: its process group is gone and its pipes are closed. */
  attemptEnded?(n: number): void;
}

/** A command process that was started: the leader of its own process group. */
export interface SpawnedProcess {
  /** Its pid, which is also its process group id. */
  pid: number;
  /**
   * Who it is beyond the pid, to find it again after a crash: boot id and start time
   * (`/proc/<pid>/stat` field 22), or null where the OS does not say (see `process-group.ts`).
   */
  startTime: string | null;
}

/** Options of one command attempt. */
export interface CommandOptions {
  /** The attempt's deadline in ms from now: then its process group is stopped. */
  timeoutMs: number;
  /** Stops the attempt's process group (Replace, cancel, shutdown, SIGTERM of the shim). */
  signal?: StopSignal;
  /** Where stdout and stderr go; dropped when absent. */
  output?: OutputSink;
  /** Told once the process runs, before any output. */
  onSpawn?(process: SpawnedProcess): void;
}

/**
 * How one command attempt ended. Never an exception. `exit` has the exit code, or null with the
 * signal that killed the process. `timeout` and `aborted` come only once the whole process group
 * is gone (SIGTERM, then SIGKILL after the graceful stop).
 */
export type CommandResult =
  | { kind: 'exit'; code: number | null; signal: string | null }
  | { kind: 'spawn-error'; message: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

/** Runs one command attempt in a process group of its own. */
export interface CommandRunner {
  run(request: CommandRequest, options: CommandOptions): Promise<CommandResult>;
}
