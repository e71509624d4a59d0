/**
 * Shared CLI plumbing: output format flag, JSON printing and the exit-code
 * table. Commands return an exit code; `main.ts` sets `process.exitCode`.
 */

/** Output formats every command accepts with `-o`. */
export type OutputFormat = 'table' | 'json';

/** Exit codes shared by the CLI commands (SPEC §6; `validate`: 0 valid, 1 invalid, 2 usage). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
} as const;

/** Thrown for a bad command line; `main.ts` prints it and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Parses `-o` / `--output`. */
export function outputFormat(value: string | undefined): OutputFormat {
  if (value === undefined || value === 'table' || value === 'text') return 'table';
  if (value === 'json') return 'json';
  throw new UsageError(`-o/--output must be "table" or "json", found ${JSON.stringify(value)}`);
}

/** Prints one JSON document followed by a newline. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Prints lines of text. */
export function printLines(lines: readonly string[]): void {
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
}
