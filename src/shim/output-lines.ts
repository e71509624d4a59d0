/**
 * A command's output as the shim's JSON log lines (SPEC §11): one `output` line per line of
 * stdout or stderr, `{"event":"output","msg":"<the line>","stream":"stdout","attempt":1}` with
 * the fire's usual fields, and one `output-truncated` line (WARN) when `max_output_bytes` was
 * reached. Streams are decoded as UTF-8 each on its own (a character split across chunks stays
 * whole); a line without its newline goes out when its attempt ends; a line longer than
 * {@link MAX_LINE_CHARS} is written in pieces.
 */
import { StringDecoder } from 'node:string_decoder';
import type { OutputWriter } from '../fire/output.js';
import type { OutputStream } from '../fire/types.js';
import type { ShimLogger } from './log.js';

/**
 * Characters of one `output` line's `msg`; a longer line is split into several (within the
 * logger's 2 KiB cap of a field).
 */
export const MAX_LINE_CHARS = 2000;

/** The {@link OutputWriter} of the shim. */
export class OutputLines implements OutputWriter {
  private readonly decoders = {
    stdout: new StringDecoder('utf8'),
    stderr: new StringDecoder('utf8'),
  };
  private readonly partial: Record<OutputStream, string> = { stdout: '', stderr: '' };
  private current = 1;

  constructor(private readonly logger: ShimLogger) {}

  attempt(n: number): void {
    this.current = n;
  }

  data(stream: OutputStream, chunk: Buffer): void {
    const text = this.partial[stream] + this.decoders[stream].write(chunk);
    const lines = text.split('\n');
    this.partial[stream] = lines.pop() ?? '';
    for (const line of lines) this.emit(stream, line.endsWith('\r') ? line.slice(0, -1) : line);
    while (this.partial[stream].length > MAX_LINE_CHARS) {
      this.emit(stream, this.partial[stream].slice(0, MAX_LINE_CHARS));
      this.partial[stream] = this.partial[stream].slice(MAX_LINE_CHARS);
    }
  }

  attemptEnded(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.partial[stream] + this.decoders[stream].end();
      this.partial[stream] = '';
      if (rest !== '') this.emit(stream, rest);
    }
  }

  truncated(maxBytes: number): void {
    this.logger.log(
      'warn',
      'output-truncated',
      `the command wrote more than max_output_bytes (${maxBytes}); the rest of its output was dropped`,
      { attempt: this.current, max_output_bytes: maxBytes },
    );
  }

  private emit(stream: OutputStream, line: string): void {
    for (let at = 0; at === 0 || at < line.length; at += MAX_LINE_CHARS) {
      const piece = line.slice(at, at + MAX_LINE_CHARS);
      this.logger.log('info', 'output', piece, { stream, attempt: this.current });
    }
  }
}
