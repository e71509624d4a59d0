/**
 * The captured output of command runs (SPEC §11): `<data-dir>/logs/<run id>.log`, mode 0600,
 * stdout and stderr of every attempt in arrival order, secrets of `env_from_secrets` redacted
 * and at most `max_output_bytes` kept (`src/fire/output.ts`). Between attempts, and where the
 * cap cut the output, cronix writes one line of its own starting `--- cronix:`. A log lives as
 * long as its run: retention deletes the logs of runs it pruned ({@link RunLogs.sweep}).
 */
import { createWriteStream, mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uuidv7Time } from '../fire/ids.js';
import { CapturedOutput, type OutputWriter } from '../fire/output.js';
import type { OutputStream } from '../fire/types.js';

/** A failed write as a few words: `ENOSPC: no space left on device` (no path: the log's is known). */
function lostReason(err: Error): string {
  const e = err as NodeJS.ErrnoException;
  const words = e.message.replace(/, \w+ '[^']*'$/, '');
  return (e.code && !words.startsWith(e.code) ? `${e.code}: ${words}` : words).slice(0, 200);
}

/** A run id as it may appear in a file name (a UUID). */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The output of one run being captured. */
export interface RunLog {
  /** The engine's output sink. */
  sink: CapturedOutput;
  /** Writes what is held back and closes the file; resolves once it is on disk. */
  close(): Promise<void>;
  /**
   * Why the output could not be written (the file could not be opened or a write failed:
   * a full disk, an I/O error), or null. From then on the rest of the output is dropped.
   */
  lost(): string | null;
}

/** The logs directory of one daemon. */
export class RunLogs {
  constructor(readonly dir: string) {}

  /** Creates the directory (mode 0700). */
  ensure(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The log file of a run, or null for a string that is no run id (never a path outside). */
  path(runId: string): string | null {
    return RUN_ID.test(runId) ? join(this.dir, `${runId}.log`) : null;
  }

  /** Starts capturing a run's output (appending: a replayed run id never repeats, a retry does not reopen). */
  open(runId: string, options: { maxBytes: number; secrets: readonly string[] }): RunLog {
    const path = this.path(runId);
    if (path === null) throw new Error(`not a run id: ${runId}`);
    const file = createWriteStream(path, { flags: 'a', mode: 0o600 });
    let failed: Error | null = null;
    file.on('error', (err) => (failed = err));
    let lastByte = 0x0a;
    const write = (buf: Buffer): void => {
      if (buf.length === 0 || failed) return;
      lastByte = buf[buf.length - 1] as number;
      file.write(buf);
    };
    const note = (text: string): void =>
      write(Buffer.from(`${lastByte === 0x0a ? '' : '\n'}--- cronix: ${text} ---\n`));
    const writer: OutputWriter = {
      data: (_stream: OutputStream, chunk: Buffer) => write(chunk),
      attempt: (n) => {
        if (n > 1) note(`attempt ${n}`);
      },
      truncated: (max) =>
        note(`output truncated: max_output_bytes (${max}) reached, the rest was dropped`),
    };
    const sink = new CapturedOutput(writer, options);
    return {
      sink,
      close: () =>
        new Promise<void>((resolve) => {
          sink.end();
          // 'close' comes after the last write's error, if there was one: lost() knows it then
          if (file.closed) return resolve();
          file.once('close', () => resolve());
          file.end();
        }),
      lost: () => (failed === null ? null : lostReason(failed)),
    };
  }

  /** Appends one cronix line to a run's log (after a crash, for instance); best effort. */
  note(runId: string, text: string): void {
    const path = this.path(runId);
    if (path === null) return;
    try {
      writeFileSync(path, `\n--- cronix: ${text} ---\n`, { flag: 'a', mode: 0o600 });
    } catch {
      // the log is a convenience; the run's row says what happened
    }
  }

  /**
   * Deletes the logs of runs that no longer exist, among those created before `before` (runs
   * retention may have pruned: a run ends after it is created, so a younger log cannot belong
   * to a pruned run). Returns how many were deleted.
   */
  async sweep(before: number, exists: (runId: string) => Promise<boolean>): Promise<number> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    let deleted = 0;
    for (const name of names) {
      const id = name.endsWith('.log') ? name.slice(0, -4) : '';
      if (!RUN_ID.test(id) || uuidv7Time(id) >= before) continue;
      if (await exists(id)) continue;
      try {
        unlinkSync(join(this.dir, name));
        deleted += 1;
      } catch {
        // gone already
      }
    }
    return deleted;
  }
}
