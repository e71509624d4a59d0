/**
 * The real `systemd-analyze calendar` (Debian's `systemd` package; it works without systemd
 * running) as an oracle for the `OnCalendar=` translation, beside cronix's own `nextFires`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { nextFires } from '../../src/contract/schedule/index.js';

/** `execFile` as a promise. */
export const run = promisify(execFile);

/** The instants (epoch ms) systemd computes for `expr` after `baseMs`, read in UTC. */
export async function systemdInstants(expr: string, baseMs: number, n: number): Promise<number[]> {
  const { stdout } = await run(
    'systemd-analyze',
    ['calendar', `--base-time=@${Math.floor(baseMs / 1000)}`, `--iterations=${n}`, expr],
    { env: { ...process.env, TZ: 'UTC', SYSTEMD_COLORS: '0' } },
  );
  const out: number[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^\s*(?:Next elapse|Iter\. #\d+): \w{3} (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) UTC$/.exec(
      line,
    );
    if (m) out.push(Date.parse(`${m[1]}T${m[2]}Z`));
  }
  if (out.length !== n)
    throw new Error(`systemd-analyze gave ${out.length} of ${n} for ${expr}:\n${stdout}`);
  return out;
}

/** The first `n` instants of the union of several expressions (a timer with several lines). */
export async function mergedInstants(
  lines: readonly string[],
  baseMs: number,
  n: number,
): Promise<string[]> {
  const all = new Set<number>();
  for (const line of lines) for (const t of await systemdInstants(line, baseMs, n)) all.add(t);
  return [...all]
    .sort((a, b) => a - b)
    .slice(0, n)
    .map((t) => new Date(t).toISOString());
}

/** cronix's own next `n` fires after `baseMs`, as ISO strings. */
export const ours = (schedule: string, tz: string, baseMs: number, n: number): string[] =>
  nextFires(schedule, { timezone: tz, from: baseMs, count: n }).map((d) => d.toISOString());
