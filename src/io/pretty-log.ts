/**
 * Human-readable log lines for `cronix serve --log-format pretty` (the default on a terminal):
 * each pino JSON line becomes `12:00:00.123 INFO  msg  key=value …`. A small formatter instead of
 * pino-pretty, which would add a dozen packages (and a worker-thread transport) for what is
 * one pure function here; the JSON stays the contract for machines (`--log-format json`).
 * Control characters of the record (a manifest key in an error, a command's message) are
 * written as `\xHH` (`terminal.ts`): a pretty line never carries a raw ESC, CR or line feed.
 */
import { escapeControls } from './terminal.js';

/** The keys every line has, shown in fixed places rather than as `key=value`. */
const FIXED = new Set(['time', 'level', 'msg', 'pid', 'hostname']);

const LEVEL_COLOURS: Record<string, string> = {
  trace: '\u001b[90m',
  debug: '\u001b[90m',
  info: '\u001b[32m',
  warn: '\u001b[33m',
  error: '\u001b[31m',
  fatal: '\u001b[35m',
};

function show(value: unknown): string {
  const text =
    typeof value === 'string'
      ? /^[^\s"=]+$/.test(value)
        ? value
        : JSON.stringify(value)
      : (JSON.stringify(value) ?? String(value));
  return escapeControls(text);
}

/** A line that is not a log record, escaped, with one line feed at its end. */
const passThrough = (line: string): string => `${escapeControls(line.replace(/\n$/, ''))}\n`;

/**
 * One JSON log line as one human line (with a trailing newline); a line that is not a JSON
 * object is passed through with its control characters escaped. `colour` adds ANSI colours to
 * the level (the only escape sequences a pretty line may hold).
 */
export function prettyLine(line: string, colour = false): string {
  let rec: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return passThrough(line);
    rec = parsed as Record<string, unknown>;
  } catch {
    return passThrough(line);
  }
  const time = typeof rec['time'] === 'string' ? escapeControls(rec['time'].slice(11, 23)) : '';
  const level = String(rec['level'] ?? '').toLowerCase();
  const label = escapeControls(level.toUpperCase().padEnd(5));
  const lvl = colour && LEVEL_COLOURS[level] ? `${LEVEL_COLOURS[level]}${label}\u001b[0m` : label;
  const extras = Object.entries(rec)
    .filter(([k, v]) => !FIXED.has(k) && v !== undefined && v !== null)
    .map(([k, v]) => `${escapeControls(k)}=${show(v)}`)
    .join(' ');
  const msg = escapeControls(String(rec['msg'] ?? ''));
  return `${[time, lvl, msg].filter((p) => p !== '').join(' ')}${extras ? `  ${extras}` : ''}\n`;
}

/** A pino destination that writes {@link prettyLine}s to `out`. */
export function prettyDestination(
  out: NodeJS.WritableStream = process.stdout,
  colour = false,
): { write(chunk: string): boolean; flushSync(): void } {
  return {
    write(chunk: string): boolean {
      for (const line of chunk.split('\n')) if (line !== '') out.write(prettyLine(line, colour));
      return true;
    },
    flushSync(): void {
      // writes are passed straight to `out`
    },
  };
}

/** `--log-format`: an explicit value, else pretty on a terminal and JSON otherwise. */
export function logFormatOf(
  value: string | undefined,
  isTty: boolean,
): 'pretty' | 'json' | { error: string } {
  if (value === undefined) return isTty ? 'pretty' : 'json';
  if (value === 'pretty' || value === 'json') return value;
  return { error: `--log-format must be "pretty" or "json", found ${JSON.stringify(value)}` };
}
