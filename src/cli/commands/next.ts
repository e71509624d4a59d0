/** `cronix next <schedule> [--tz ZONE] [--from INSTANT] [-n COUNT] [-o json]` (SPEC §3). */
import {
  checkTimeZone,
  nextFires,
  parseSchedule,
  toLocalRfc3339,
} from '../../contract/schedule/index.js';
import { parseInstant, rfc3339Utc } from '../../contract/run.js';
import { EXIT, printJson, printLines, type OutputFormat } from '../output.js';

/** Options of the command as commander hands them over. */
export interface NextOptions {
  tz?: string;
  from?: string;
  n?: string;
  output: OutputFormat;
}

/** Largest `-n` accepted. */
export const MAX_COUNT = 10_000;

/** Runs the command and returns its exit code; `now` is the default `--from`. */
export function nextCommand(schedule: string, options: NextOptions, now: number): number {
  const fail = (message: string): number => {
    process.stderr.write(`error: ${message}\n`);
    return EXIT.error;
  };
  const parsed = parseSchedule(schedule);
  if (!parsed.ok) return fail(`schedule: ${parsed.error}`);
  const timezone = options.tz ?? 'UTC';
  const zoneError = checkTimeZone(timezone);
  if (zoneError) return fail(`--tz: ${zoneError}`);
  const from = options.from === undefined ? now : parseInstant(options.from);
  if (from === null) {
    return fail(
      `--from: expected an RFC 3339 instant (2026-03-29T01:00:00Z) or Unix seconds, found ${JSON.stringify(options.from)}`,
    );
  }
  const count = options.n === undefined ? 1 : Number(options.n);
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
    return fail(
      `-n: expected an integer from 1 to ${MAX_COUNT}, found ${JSON.stringify(options.n)}`,
    );
  }
  const fires = nextFires(parsed.schedule, { timezone, from, count }).map((d) => ({
    utc: rfc3339Utc(d.getTime()),
    local: toLocalRfc3339(timezone, d.getTime()),
  }));
  if (options.output === 'json') {
    printJson({ schedule, timezone, fires });
  } else {
    printLines(fires.map((f) => `${f.utc}  ${f.local}`));
  }
  return EXIT.ok;
}
