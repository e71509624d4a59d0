/**
 * Next-fire computations per second: cronix vs croner vs cron-parser, same
 * schedules, same zones, same process. Each operation computes the fire that
 * follows the previous one (walking forward from 2026-01-01, restarting every
 * 500 steps so every library stays in the same years).
 */
import { CronExpressionParser } from 'cron-parser';
import { Cron } from 'croner';
import { Bench } from 'tinybench';
import { nextFire, parseSchedule, type Schedule } from '../src/contract/schedule/index.js';

export const SCHEDULES = [
  '* * * * *',
  '*/15 * * * *',
  '0 9 * * MON-FRI',
  '30 2 * * *',
  '0 0 1 * *',
  '0 0 1,15 * FRI',
  // six fields, seconds first (the seconds extension of SPEC §3)
  '*/10 * * * * *',
  '30 0 9 * * MON-FRI',
] as const;
export const ZONES = ['UTC', 'America/New_York'] as const;

const START = Date.UTC(2026, 0, 1);
const RESTART_EVERY = 500;

export interface ScheduleRow {
  schedule: string;
  zone: string;
  cronix: number;
  croner: number;
  cronParser: number;
}

function parsed(expr: string): Schedule {
  const r = parseSchedule(expr);
  if (!r.ok) throw new Error(r.error);
  return r.schedule;
}

/** Runs the comparison and returns operations per second per row. */
export async function benchSchedules(timeMs = 400): Promise<ScheduleRow[]> {
  const rows: ScheduleRow[] = [];
  for (const zone of ZONES) {
    for (const expr of SCHEDULES) {
      const spec = parsed(expr);
      const bench = new Bench({ time: timeMs, warmupTime: 100 });

      let t = START;
      let n = 0;
      bench.add('cronix', () => {
        if (++n % RESTART_EVERY === 0) t = START;
        t = nextFire(spec, zone, t) as number;
      });

      // croner with classic (OR) day matching, as cronix
      // croner's fastest UTC path is no `timezone` at all in a process whose local zone is UTC
      const localIsUtc =
        new Date(START).getTimezoneOffset() === 0 &&
        new Date(START + 182 * 86_400_000).getTimezoneOffset() === 0;
      const job =
        zone === 'UTC' && localIsUtc
          ? new Cron(expr, { domAndDow: false, paused: true })
          : new Cron(expr, { timezone: zone, domAndDow: false, paused: true });
      let d: Date = new Date(START);
      let m = 0;
      bench.add('croner', () => {
        if (++m % RESTART_EVERY === 0) d = new Date(START);
        d = job.nextRun(d) as Date;
      });

      let it = CronExpressionParser.parse(expr, { currentDate: new Date(START), tz: zone });
      let k = 0;
      bench.add('cron-parser', () => {
        if (++k % RESTART_EVERY === 0)
          it = CronExpressionParser.parse(expr, { currentDate: new Date(START), tz: zone });
        it.next();
      });

      await bench.run();
      const hz = (name: string): number => {
        const task = bench.getTask(name);
        const result = task?.result as { throughput?: { mean: number }; hz?: number } | undefined;
        return Math.round(result?.throughput?.mean ?? result?.hz ?? 0);
      };
      rows.push({
        schedule: expr,
        zone,
        cronix: hz('cronix'),
        croner: hz('croner'),
        cronParser: hz('cron-parser'),
      });
    }
  }
  return rows;
}
