/**
 * Captured output of a command job (SPEC §11), shared by the daemon (a log file per run) and the
 * shim (JSON log lines): every value of the job's `env_from_secrets` is replaced by
 * `[REDACTED]`, then at most `max_output_bytes` are kept per run (all attempts together); the
 * rest is dropped and the run says so (`truncated`).
 *
 * Redaction works on the byte streams as they arrive, so a secret split across two chunks is
 * still caught: each stream holds back only a tail that may be the beginning of a secret
 * (at most `longest secret − 1` bytes) until more data comes or the attempt ends. The cap counts the bytes kept after redaction, so a cut can never
 * leave the beginning of a secret behind. Chunks are cut on UTF-8 character boundaries.
 */
import { REDACTED } from '../secrets/resolve.js';
import type { OutputSink, OutputStream } from './types.js';

/** Where captured output goes once it is redacted and within the cap. */
export interface OutputWriter {
  /** Bytes of one stream, in arrival order. */
  data(stream: OutputStream, chunk: Buffer): void;
  /** Attempt `n` begins. */
  attempt?(n: number): void;
  /** Attempt `n` ended; every byte of it that is kept was written. */
  attemptEnded?(n: number): void;
  /** The cap was reached at `maxBytes`: everything after is dropped. Called once. */
  truncated?(maxBytes: number): void;
}

/** Holds back a possible secret prefix at the end of a byte stream. */
export class StreamRedactor {
  private pending: Buffer = Buffer.alloc(0);
  private readonly secrets: Buffer[];
  private readonly hold: number;
  private readonly replacement = Buffer.from(REDACTED);

  constructor(secrets: readonly string[]) {
    // longest first: a secret containing another is hidden whole
    this.secrets = [...new Set(secrets)]
      .filter((s) => s.length > 0)
      .map((s) => Buffer.from(s, 'utf8'))
      .sort((a, b) => b.length - a.length);
    this.hold = Math.max(0, ...this.secrets.map((s) => s.length - 1));
  }

  /** Adds a chunk; returns what is safe to pass on now. */
  push(chunk: Buffer): Buffer {
    if (this.secrets.length === 0) return chunk;
    return this.scan(
      this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]),
      false,
    );
  }

  /** The stream ended: the held-back tail, redacted. */
  flush(): Buffer {
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    return rest.length === 0 ? rest : this.scan(rest, true);
  }

  /**
   * One left-to-right pass: the earliest match wins, the longest at a tie. Unless `final`, the
   * bytes from the first place where a secret may begin but `buf` ends too soon to tell wait in
   * `pending`, and no match is taken from there on (a longer secret might start earlier).
   */
  private scan(buf: Buffer, final: boolean): Buffer {
    const out: Buffer[] = [];
    let from = 0;
    for (;;) {
      const partial = final ? buf.length : this.firstPartial(buf, from);
      let at = -1;
      let len = 0;
      for (const s of this.secrets) {
        const i = buf.indexOf(s, from);
        if (i >= 0 && (at < 0 || i < at)) {
          at = i;
          len = s.length;
        }
      }
      if (at < 0 || partial <= at) {
        out.push(buf.subarray(from, partial));
        this.pending = Buffer.from(buf.subarray(partial));
        return Buffer.concat(out);
      }
      out.push(buf.subarray(from, at), this.replacement);
      from = at + len;
    }
  }

  /** The first position ≥ `from` where `buf` ends inside a secret's beginning, else its length. */
  private firstPartial(buf: Buffer, from: number): number {
    for (let p = Math.max(from, buf.length - this.hold); p < buf.length; p++) {
      const tail = buf.subarray(p);
      for (const s of this.secrets)
        if (s.length > tail.length && s.subarray(0, tail.length).equals(tail)) return p;
    }
    return buf.length;
  }
}

/** Options of {@link CapturedOutput}. */
export interface CaptureOptions {
  /** Bytes kept per run (after redaction). */
  maxBytes: number;
  /** Values to replace by `[REDACTED]` (the resolved `env_from_secrets`). */
  secrets: readonly string[];
}

/** The longest prefix of `buf` of at most `max` bytes that ends on a UTF-8 character boundary. */
export function utf8Prefix(buf: Buffer, max: number): Buffer {
  if (buf.length <= max) return buf;
  let end = Math.max(0, max);
  // back off while the first dropped byte continues a character (10xxxxxx)
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end -= 1;
  return buf.subarray(0, end);
}

/** The {@link OutputSink} of one fire: redaction, then the cap, then the writer. */
export class CapturedOutput implements OutputSink {
  private readonly redactors: Record<OutputStream, StreamRedactor>;
  private kept = 0;
  private cut = false;

  constructor(
    private readonly writer: OutputWriter,
    private readonly options: CaptureOptions,
  ) {
    this.redactors = {
      stdout: new StreamRedactor(options.secrets),
      stderr: new StreamRedactor(options.secrets),
    };
  }

  /** Whether output was dropped at the cap. */
  get truncated(): boolean {
    return this.cut;
  }

  /** Bytes kept so far. */
  get bytes(): number {
    return this.kept;
  }

  attempt(n: number): void {
    this.writer.attempt?.(n);
  }

  attemptEnded(n: number): void {
    this.flush();
    this.writer.attemptEnded?.(n);
  }

  write(stream: OutputStream, chunk: Buffer): void {
    this.keep(stream, this.redactors[stream].push(chunk));
  }

  /** Writes what is still held back (within the cap); idempotent. */
  end(): void {
    this.flush();
  }

  private flush(): void {
    for (const stream of ['stdout', 'stderr'] as const)
      this.keep(stream, this.redactors[stream].flush());
  }

  private keep(stream: OutputStream, buf: Buffer): void {
    if (buf.length === 0 || this.cut) return;
    const room = this.options.maxBytes - this.kept;
    const part = utf8Prefix(buf, room);
    if (part.length > 0) {
      this.kept += part.length;
      this.writer.data(stream, part);
    }
    if (part.length < buf.length) {
      this.cut = true;
      this.writer.truncated?.(this.options.maxBytes);
    }
  }
}
