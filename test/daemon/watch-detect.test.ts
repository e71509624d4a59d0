/**
 * Host-mode detection (SPEC §15), pure: `detect` on hand-made states and times. Which instants
 * are overdue (grace, jitter, the restart floor, DST and seconds through the same schedule
 * code), which open runs ended without an end report, and when to look again.
 */
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { buildRegistry, type RegisteredJob } from '../../src/daemon/registry.js';
import {
  detect,
  endDeadline,
  MAX_DUE_PER_TURN,
  missedRow,
  startDeadline,
  type Cursor,
} from '../../src/daemon/watch/detect.js';
import type { RunRecord } from '../../src/daemon/store/types.js';
import { newRun } from './store-fixtures.js';

function job(
  over: Record<string, unknown> = {},
  policy: Record<string, unknown> = {},
): RegisteredJob {
  const parsed = parseManifest({
    version: 1,
    app: 'shop',
    jobs: [
      {
        name: 'nightly',
        schedule: '0 3 * * *',
        command: { argv: ['/bin/true'] },
        policy: {
          timeout_seconds: 60,
          retries: { max_attempts: 2, min_seconds: 5, max_seconds: 5 },
          ...policy,
        },
        ...over,
      },
    ],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return [...buildRegistry([parsed.manifest], 'host').values()][0]!;
}

const H = 3_600_000;
const DAY = 24 * H;
const D0 = Date.UTC(2026, 10, 26); // 2026-11-26 00:00 UTC
const cursor = (j: RegisteredJob, through: number, index = 0): Cursor => ({
  job: j,
  index,
  through,
});
const run = (j: RegisteredJob, startedAt: number): RunRecord => ({
  ...newRun({ app: j.app, job: j.job.name, trigger: 'host', phase: 'running', startedAt }),
  seq: 1,
});

describe('watch detection', () => {
  it('deadlines: grace (default 120 s), stable and random jitter; worst case + grace for ends', () => {
    const plain = job();
    expect(plain.firedBy).toBe('host');
    expect(startDeadline(plain, 0, D0 + 3 * H)).toBe(D0 + 3 * H + 120_000);
    const jittered = job(
      {},
      { jitter: { stable_seconds: 30, random_seconds: 20 }, watch: { grace_seconds: 10 } },
    );
    const d = startDeadline(jittered, 0, D0 + 3 * H) - (D0 + 3 * H);
    expect(d).toBeGreaterThanOrEqual(10_000 + 20_000 - 1);
    expect(d).toBeLessThanOrEqual(10_000 + 50_000);
    // 2 attempts × (60 s + the command's 10 s graceful stop) + 5 s backoff + 120 s grace
    expect(endDeadline(plain, 1000)).toBe(1000 + 265_000);
  });

  const table: {
    name: string;
    j: RegisteredJob;
    through: number;
    since: number;
    now: number;
    due: number[];
    nextAt: number | null;
  }[] = [
    {
      name: 'nothing due before the grace ends',
      j: job(),
      through: D0,
      since: D0,
      now: D0 + 3 * H + 119_999,
      due: [],
      nextAt: D0 + 3 * H + 120_000,
    },
    {
      name: 'due at the grace',
      j: job(),
      through: D0,
      since: D0,
      now: D0 + 3 * H + 120_000,
      due: [D0 + 3 * H],
      nextAt: D0 + DAY + 3 * H + 120_000,
    },
    {
      name: 'three days of downtime: every instant, but not before the restart floor',
      j: job(),
      through: D0,
      since: D0 + 3 * DAY + 4 * H,
      now: D0 + 3 * DAY + 4 * H + 60_000,
      due: [],
      nextAt: D0 + 3 * DAY + 4 * H + 120_000,
    },
    {
      name: 'after the restart floor, every instant of the downtime',
      j: job(),
      through: D0,
      since: D0 + 3 * DAY + 4 * H,
      now: D0 + 3 * DAY + 4 * H + 120_000,
      due: [D0 + 3 * H, D0 + DAY + 3 * H, D0 + 2 * DAY + 3 * H, D0 + 3 * DAY + 3 * H],
      nextAt: D0 + 4 * DAY + 3 * H + 120_000,
    },
    {
      name: 'seconds: every 10 s, grace 10 s',
      j: job({ schedule: '*/10 * * * * *' }, { watch: { grace_seconds: 10 } }),
      through: D0,
      since: D0,
      now: D0 + 30_000,
      due: [D0 + 10_000, D0 + 20_000],
      nextAt: D0 + 40_000,
    },
    {
      name: 'DST spring forward (Europe/Berlin): the fixed-time fire comes once, after the gap',
      j: job({ schedule: '30 2 * * *', timezone: 'Europe/Berlin' }),
      through: Date.UTC(2026, 2, 28, 12),
      since: Date.UTC(2026, 2, 28, 12),
      now: Date.UTC(2026, 2, 29, 12),
      due: [Date.UTC(2026, 2, 29, 1, 0)],
      nextAt: Date.UTC(2026, 2, 30, 0, 30) + 120_000,
    },
    {
      name: 'a disabled job expects nothing',
      j: job({ enabled: false }),
      through: D0,
      since: D0,
      now: D0 + 10 * DAY,
      due: [],
      nextAt: null,
    },
  ];
  for (const t of table) {
    it(`instants: ${t.name}`, () => {
      const d = detect({
        now: t.now,
        since: t.since,
        cursors: [cursor(t.j, t.through)],
        open: [],
        jobOf: () => t.j,
      });
      expect(d.due.map((x) => x.at)).toEqual(t.due);
      expect(d.nextAt).toBe(t.nextAt);
      expect(d.advanced.map((a) => a.through)).toEqual(t.due.length ? [t.due.at(-1)] : []);
    });
  }

  it('a second-level schedule after a long downtime: at most MAX_DUE_PER_TURN per turn, then at once again', () => {
    const j = job({ schedule: '* * * * * *' }, { watch: { grace_seconds: 10 } });
    const d = detect({
      now: D0 + DAY,
      since: D0,
      cursors: [cursor(j, D0)],
      open: [],
      jobOf: () => j,
    });
    expect(d.due).toHaveLength(MAX_DUE_PER_TURN);
    expect(d.nextAt).toBe(D0 + DAY);
  });

  it('open runs: crashed past worst case + grace, else the next look at their deadline; unknown jobs left alone', () => {
    const j = job();
    const old = run(j, D0);
    const fresh = run(j, D0 + 200_000);
    const stranger = { ...run(j, D0), job: 'gone' };
    const d = detect({
      now: D0 + 265_000,
      since: D0,
      cursors: [],
      open: [old, fresh, stranger],
      jobOf: (k) => (k === 'shop/nightly' ? j : undefined),
    });
    expect(d.crashed.map((c) => c.run.id)).toEqual([old.id]);
    expect(d.nextAt).toBe(D0 + 200_000 + 265_000);
  });

  it('a missed row: trigger host, ended, its instant, the reason naming the grace', () => {
    const j = job({}, { watch: { grace_seconds: 300 } });
    const row = missedRow({ job: j, index: 0, at: D0 + 3 * H }, D0 + 3 * H + 300_000);
    expect(row).toMatchObject({
      trigger: 'host',
      phase: 'ended',
      outcome: 'missed',
      scheduleIndex: 0,
      scheduledTime: D0 + 3 * H,
      error: 'no report from any host within 300 s',
    });
    expect(row.runKey.startsWith(`shop/nightly#2026-11-26T03:00:00Z#`)).toBe(true);
  });
});
