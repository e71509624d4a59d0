/**
 * Runs `cronix trigger` in this process through the shim's `main`, with its
 * process effects injected: captured log lines, a recording transport (so
 * "nothing sent" is exact and no request leaves the machine), an emitter
 * standing in for SIGTERM/SIGINT, and an `exit` that records instead of
 * ending the test run. Used where hundreds of cases make real processes too
 * slow (~150 ms each); a sample of the same cases also runs as real processes.
 */
import { EventEmitter } from 'node:events';
import { main } from '../../src/shim/main.js';
import type {
  SendOptions,
  Transport,
  TransportRequest,
  TransportResult,
} from '../../src/fire/types.js';

/** A transport that records each request and answers from `answer` (default 200). */
export interface RecordingTransport extends Transport {
  sent: TransportRequest[];
}

/** Builds a {@link RecordingTransport}. */
export function recordingTransport(
  answer: (req: TransportRequest, opts: SendOptions) => Promise<TransportResult> = async () => ({
    kind: 'response',
    status: 200,
    bodyExcerpt: 'ok',
  }),
): RecordingTransport {
  const sent: TransportRequest[] = [];
  return {
    sent,
    send: (req, opts) => {
      sent.push(req);
      return answer(req, opts);
    },
  };
}

/** A transport whose requests hang until aborted (then report `aborted`). */
export function hangingTransport(): RecordingTransport {
  return recordingTransport(
    (_req, opts) =>
      new Promise((resolve) => {
        opts.signal?.addEventListener('abort', () => resolve({ kind: 'aborted' }), { once: true });
      }),
  );
}

/** One in-process run. */
export interface InProcessRun {
  code: number;
  /** Raw lines as written (each ends in a newline). */
  raw: string[];
  /** Lines parsed as JSON (`{ unparsable }` for a line that is not JSON). */
  lines: Record<string, unknown>[];
  /** Codes passed to `exit` (a forced stop); empty normally. */
  exits: number[];
  transport: RecordingTransport;
}

/** Options of {@link runInProcess}. */
export interface InProcessOptions {
  env?: NodeJS.ProcessEnv;
  transport?: RecordingTransport;
  /** Called with the signal emitter once `main` started (e.g. to emit SIGTERM). */
  onStart?: (signals: EventEmitter) => void;
}

/** A run in progress: its output so far, and its end. */
export interface InProcessChild {
  signals: EventEmitter;
  raw: string[];
  exits: number[];
  transport: RecordingTransport;
  done: Promise<InProcessRun>;
}

function parseLines(raw: readonly string[]): Record<string, unknown>[] {
  return raw
    .join('')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return { unparsable: l };
      }
    });
}

/** Starts `main(argv)` in-process; `raw` and `exits` fill while it runs. */
export function startInProcess(argv: string[], options: InProcessOptions = {}): InProcessChild {
  const raw: string[] = [];
  const exits: number[] = [];
  const signals = new EventEmitter();
  const transport = options.transport ?? recordingTransport();
  const running = main(argv, {
    env: options.env ?? {},
    write: (line) => void raw.push(line),
    exit: (code) => void exits.push(code),
    signals,
    transport,
  });
  options.onStart?.(signals);
  const done = running.then((code) => ({ code, raw, lines: parseLines(raw), exits, transport }));
  return { signals, raw, exits, transport, done };
}

/** Runs `main(argv)` in-process to its end. */
export function runInProcess(
  argv: string[],
  options: InProcessOptions = {},
): Promise<InProcessRun> {
  return startInProcess(argv, options).done;
}

/** The JSON lines of `raw`. */
export { parseLines };
