/**
 * Properties of 6-field (seconds-first) schedules against the independent second-by-second
 * model of test/helpers/oracle.ts: next(t) > t, every fire matches, no fire is skipped between
 * t and next(t) at second resolution, and the DST rules of SPEC §3 hold in the zones the spec
 * names (fixed-time = minute and hour not wildcards, whatever the seconds field).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  nextFire,
  parseSchedule,
  previousFire,
  type CronSpec,
} from '../../src/contract/schedule/index.js';
import {
  cronExpression,
  localSecondTable,
  matchesMinute,
  matchesSecond,
  oracleFires,
  oracleTransitions,
  ZONES,
} from '../helpers/oracle.js';

const SECOND = 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const FROM_2020 = Date.UTC(2020, 0, 1);
const TO_2031 = Date.UTC(2031, 0, 1);

function spec(expr: string): CronSpec | null {
  const r = parseSchedule(expr);
  return r.ok && r.schedule.kind === 'cron' ? r.schedule : null;
}

/** Engine fires in (from, to]; throws on a fire that does not advance, or a runaway loop. */
function engineFires(s: CronSpec, tz: string, from: number, to: number): number[] {
  const out: number[] = [];
  let t = from;
  for (let guard = 0; guard < 30_000; guard++) {
    const next = nextFire(s, tz, t);
    if (next === null) throw new Error('no fire within the horizon');
    if (next <= t) throw new Error(`next(${t}) = ${next} is not after t`);
    if (next > to) return out;
    out.push(next);
    t = next;
  }
  throw new Error('more than 30000 fires in the window: loop or burst');
}

/** Oracle fires in (from, to], the model starting 3 h earlier (longer than any repeated interval). */
function modelFires(s: CronSpec, tz: string, from: number, to: number): number[] {
  const start = Math.floor(from / MINUTE) * MINUTE - 3 * HOUR;
  const table = localSecondTable(tz, start, to + MINUTE);
  return oracleFires(s, table, start, from, to, SECOND);
}

const transitionsByZone = new Map<string, number[]>(
  ZONES.map((z) => [z, z === 'UTC' ? [] : oracleTransitions(z, FROM_2020, TO_2031)]),
);

describe('6-field schedules against the second-by-second model', () => {
  it('next(t) > t, every fire matches, none is skipped (random schedules, zones and instants)', () => {
    const instant = fc.oneof(
      fc.integer({ min: FROM_2020, max: TO_2031 - DAY }),
      fc.integer({ min: -2 * HOUR, max: 2 * HOUR }).map((d) => ({ nearTransition: d })),
    );
    fc.assert(
      fc.property(
        cronExpression(true, true),
        fc.constantFrom(...ZONES),
        instant,
        fc.nat(),
        (expr, tz, at, pick) => {
          const s = spec(expr);
          fc.pre(s !== null);
          const list = transitionsByZone.get(tz) ?? [];
          const t =
            typeof at === 'number'
              ? at
              : list.length > 0
                ? (list[pick % list.length] as number) + at.nearTransition
                : FROM_2020 + pick;
          const to = t + 2 * HOUR;
          expect(engineFires(s as CronSpec, tz, t, to)).toEqual(
            modelFires(s as CronSpec, tz, t, to),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it('sparse UTC schedules: the next fire matches and no matching second lies between t and it', () => {
    fc.assert(
      fc.property(
        cronExpression(false, true),
        fc.integer({ min: FROM_2020, max: TO_2031 }),
        (expr, t) => {
          const s = spec(expr);
          fc.pre(s !== null);
          const c = s as CronSpec;
          const next = nextFire(c, 'UTC', t) as number;
          expect(next).toBeGreaterThan(t);
          expect(next % SECOND).toBe(0);
          expect(matchesSecond(c, next / SECOND)).toBe(true);
          const firstSecond = Math.floor(t / SECOND) + 1;
          const nextSecond = next / SECOND;
          for (let m = Math.floor(firstSecond / 60); m <= Math.floor(nextSecond / 60); m++) {
            const d = new Date(m * MINUTE);
            const dom = c.doms[d.getUTCDate()] === 1;
            const dow = c.dows[d.getUTCDay()] === 1;
            const dayOk = c.domStar || c.dowStar ? dom && dow : dom || dow;
            if (!dayOk || c.months[d.getUTCMonth() + 1] !== 1) {
              m = Math.floor(m / 1440) * 1440 + 1439; // jump to the day's last minute
              continue;
            }
            if (!matchesMinute(c, m)) continue;
            const lo = Math.max(m * 60, firstSecond);
            const hi = Math.min(m * 60 + 60, nextSecond);
            for (let x = lo; x < hi; x++) expect(matchesSecond(c, x)).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('previousFire(t) is the last fire ≤ t: next(previous(t)) > t', () => {
    fc.assert(
      fc.property(
        cronExpression(true, true),
        fc.constantFrom(...ZONES),
        fc.integer({ min: FROM_2020, max: TO_2031 }),
        (expr, tz, t) => {
          const s = spec(expr);
          fc.pre(s !== null);
          const prev = previousFire(s as CronSpec, tz, t) as number;
          expect(prev).toBeLessThanOrEqual(t);
          expect(nextFire(s as CronSpec, tz, prev) as number).toBeGreaterThan(t);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('6-field schedules: no loop, stall or burst across any transition of 2020–2030', () => {
  for (const tz of ZONES.filter((z) => z !== 'UTC')) {
    it(`${tz}: fires within 3 h of every transition equal the model, ≥ 1 s apart`, () => {
      const fixed = ['*/20 30 2 * * *', '0,30 30 1 * * *', '15 0 0 * * *', '* 45 1 * * *'];
      const wild = ['*/10 * * * * *', '30 */15 * * * *', '5 0 * * * *', '59 * 1 * * *'];
      const random = fc.sample(cronExpression(true, true), {
        numRuns: 4,
        seed: tz.length * 104_729,
      });
      const schedules = [...fixed, ...wild, ...random]
        .map(spec)
        .filter((s): s is CronSpec => s !== null);
      for (const tr of transitionsByZone.get(tz) ?? []) {
        const from = tr - 3 * HOUR;
        const to = tr + 3 * HOUR;
        const start = from - 3 * HOUR;
        const table = localSecondTable(tz, start, to + MINUTE);
        for (const s of schedules) {
          const fires = engineFires(s, tz, from, to);
          expect(fires, `${s.source} around ${new Date(tr).toISOString()}`).toEqual(
            oracleFires(s, table, start, from, to, SECOND),
          );
          for (let i = 1; i < fires.length; i++) {
            expect((fires[i] as number) - (fires[i - 1] as number)).toBeGreaterThanOrEqual(SECOND);
          }
        }
      }
    });
  }
});
