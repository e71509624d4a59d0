import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextFire, parseSchedule, type CronSpec } from '../../src/contract/schedule/index.js';
import {
  cronExpression,
  localTable,
  matchesMinute,
  oracleFires,
  oracleTransitions,
  ZONES,
} from '../helpers/oracle.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const FROM_2020 = Date.UTC(2020, 0, 1);
const TO_2031 = Date.UTC(2031, 0, 1);

function spec(expr: string): CronSpec | null {
  const r = parseSchedule(expr);
  return r.ok && r.schedule.kind === 'cron' ? r.schedule : null;
}

/** Engine fires in (from, to]. */
function engineFires(s: CronSpec, tz: string, from: number, to: number): number[] {
  const out: number[] = [];
  let t = from;
  for (let guard = 0; guard < 5000; guard++) {
    const next = nextFire(s, tz, t);
    if (next === null) throw new Error('no fire within the horizon');
    if (next <= t) throw new Error(`next(${t}) = ${next} is not after t`);
    if (next > to) return out;
    out.push(next);
    t = next;
  }
  throw new Error('more than 5000 fires in the window: loop or burst');
}

const transitionsByZone = new Map<string, number[]>(
  ZONES.map((z) => [z, z === 'UTC' ? [] : oracleTransitions(z, FROM_2020, TO_2031)]),
);

describe('schedule properties against an independent minute-by-minute model', () => {
  it('finds the zones the spec names to have DST transitions every year', () => {
    expect(transitionsByZone.get('America/New_York')?.length).toBe(22);
    expect(transitionsByZone.get('Europe/Berlin')?.length).toBe(22);
    expect(transitionsByZone.get('Australia/Lord_Howe')?.length).toBeGreaterThanOrEqual(22);
    expect(transitionsByZone.get('America/Santiago')?.length).toBeGreaterThanOrEqual(20);
    expect(transitionsByZone.get('America/Havana')?.length).toBeGreaterThanOrEqual(20);
  });

  it('next(t) > t, every fire matches, and no fire is skipped (random schedules, zones and instants)', () => {
    const instant = fc.oneof(
      fc.integer({ min: FROM_2020, max: TO_2031 - 2 * DAY }),
      // near a transition of the chosen zone (mapped below)
      fc.integer({ min: -DAY, max: DAY }).map((d) => ({ nearTransition: d })),
    );
    fc.assert(
      fc.property(
        cronExpression(true),
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
          const to = t + DAY;
          const start = Math.floor(t / MINUTE) * MINUTE - DAY;
          const table = localTable(tz, start, to + MINUTE);
          const expected = oracleFires(s as CronSpec, table, start, t, to);
          expect(engineFires(s as CronSpec, tz, t, to)).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('sparse UTC schedules: the next fire matches and no matching minute lies between t and it', () => {
    fc.assert(
      fc.property(
        cronExpression(false),
        fc.integer({ min: FROM_2020, max: TO_2031 }),
        (expr, t) => {
          const s = spec(expr);
          fc.pre(s !== null);
          const next = nextFire(s as CronSpec, 'UTC', t) as number;
          expect(next).toBeGreaterThan(t);
          expect(next % MINUTE).toBe(0);
          expect(matchesMinute(s as CronSpec, next / MINUTE)).toBe(true);
          // walk the minutes in between, a day at a time, skipping days whose date cannot match
          for (let m = Math.floor(t / MINUTE) + 1; m < next / MINUTE; m++) {
            const d = new Date(m * MINUTE);
            const dom = (s as CronSpec).doms[d.getUTCDate()] === 1;
            const dow = (s as CronSpec).dows[d.getUTCDay()] === 1;
            const dayOk =
              (s as CronSpec).domStar || (s as CronSpec).dowStar ? dom && dow : dom || dow;
            if (!dayOk || (s as CronSpec).months[d.getUTCMonth() + 1] !== 1) {
              m = Math.floor(m / 1440) * 1440 + 1439; // jump to the day's last minute
              continue;
            }
            expect(matchesMinute(s as CronSpec, m)).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('no loop, stall or burst across any transition of 2020–2030', () => {
  for (const tz of ZONES.filter((z) => z !== 'UTC')) {
    it(`${tz}: fires around every transition equal the model, strictly increasing, ≥ 60 s apart`, () => {
      const transitions = transitionsByZone.get(tz) ?? [];
      // fixed-time jobs inside each zone's gap/overlap hour, plus random ones
      const fixed = [
        '30 2 * * *',
        '30 1 * * *',
        '45 1 * * *',
        '15 2 * * *',
        '30 23 * * *',
        '30 0 * * *',
        '0 0 * * *',
      ];
      const wild = ['*/15 * * * *', '0 * * * *', '* * * * *', '30 23 * * 6'];
      const random = fc.sample(cronExpression(true), { numRuns: 10, seed: tz.length * 7919 });
      const schedules = [...fixed, ...wild, ...random]
        .map(spec)
        .filter((s): s is CronSpec => s !== null);
      for (const tr of transitions) {
        const start = tr - 2 * DAY;
        const from = tr - DAY;
        const to = tr + DAY;
        const table = localTable(tz, start, to + MINUTE);
        for (const s of schedules) {
          const fires = engineFires(s, tz, from, to);
          expect(fires, `${s.source} around ${new Date(tr).toISOString()}`).toEqual(
            oracleFires(s, table, start, from, to),
          );
          for (let i = 1; i < fires.length; i++) {
            expect((fires[i] as number) - (fires[i - 1] as number)).toBeGreaterThanOrEqual(MINUTE);
          }
        }
      }
    });
  }
});
