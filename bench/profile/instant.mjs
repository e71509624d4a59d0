/**
 * The instant a dispatch bench's `cronix serve` fires at, read from the first manifest file on
 * its command line (the bench writes `S[,S2] M H * * *`, UTC, for today): for the `--import`
 * helpers of this folder, which act at a time relative to it.
 */
import { readFileSync } from 'node:fs';

/** Epoch ms of the first instant, or null when this process was given no manifest. */
export function instantOf(argv = process.argv) {
  const file = argv.find((a) => a.endsWith('.json'));
  if (file === undefined) return null;
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  const [seconds, minute, hour] = manifest.jobs[0].schedule.split(' ');
  const now = new Date();
  return Date.UTC(
    now.getUTCFullYear(),
    now.getUTCMonth(),
    now.getUTCDate(),
    Number(hour),
    Number(minute),
    Number(seconds.split(',')[0]),
  );
}

/** Calls `fn` at `offsetMs` from the instant (negative: before it); an unref'd timer. */
export function atInstant(offsetMs, fn) {
  const t = instantOf();
  if (t !== null) setTimeout(fn, t + offsetMs - Date.now()).unref();
}
