/**
 * Host mode refuses what it cannot honour of calendars (SPEC §16 "Calendars") at plan time, on
 * every backend, with the reason: `policy.blackout` (the host scheduler starts every fire and the
 * trigger shim keeps no calendar) and `L` in a schedule (no backend translates it). The same job
 * without them is accepted, so each refusal is its own.
 */
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { parseSchedule } from '../../src/contract/schedule/index.js';
import type { DesiredEntry } from '../../src/reconcile/backend.js';
import { toAwsSchedule } from '../../src/reconcile/backends/aws-cron.js';
import { refuseEntry } from '../../src/reconcile/backends/aws-schedule.js';
import { translateSchedule as crontabSchedule } from '../../src/reconcile/backends/crontab-schedule.js';
import { translateSchedule as kubernetesSchedule } from '../../src/reconcile/backends/kubernetes-schedule.js';
import { toOnCalendar } from '../../src/reconcile/backends/systemd-calendar.js';
import { refuseCronPolicy } from '../../src/reconcile/backends/crontab.js';
import { refuseKubernetes } from '../../src/reconcile/backends/kubernetes-render.js';
import { timerPolicy } from '../../src/reconcile/backends/systemd-policy.js';
import { desiredEntries } from '../../src/reconcile/desired.js';

const NOW = Date.UTC(2026, 0, 1);
const REASON =
  /^policy\.blackout needs cronix serve: the host scheduler starts every fire and the trigger shim keeps no calendar/;

function entry(policy: Record<string, unknown>): DesiredEntry {
  const r = parseManifest({
    version: 1,
    app: 'billing',
    jobs: [
      {
        name: 'settle',
        schedule: '0 3 * * *',
        request: { url: 'https://billing.example.com/settle' },
        auth: { secret_refs: ['env:CRON_SECRET'] },
        policy,
      },
    ],
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return desiredEntries(r.manifest)[0]!;
}

const windows = {
  blackout: [
    { cron: '0 0 * * 6', duration_seconds: 172_800 },
    { from: '2026-12-24T00:00:00Z', to: '2026-12-27T00:00:00Z' },
  ],
};

const backends: [string, (e: DesiredEntry) => string[]][] = [
  ['crontab', (e) => refuseCronPolicy(e)],
  [
    'systemd',
    (e) => {
      const p = parsed(e);
      const r = timerPolicy(e.spec, p, NOW);
      return r.ok ? [] : r.reasons;
    },
  ],
  [
    'kubernetes',
    (e) =>
      refuseKubernetes(e, { namespace: 'jobs', image: 'ghcr.io/acme/cronix:1', secret: 's' }, NOW),
  ],
  ['aws', (e) => refuseEntry(e, NOW)],
];

function parsed(e: DesiredEntry) {
  const r = parseSchedule(e.schedule);
  if (!r.ok) throw new Error(r.error);
  return r.schedule;
}

describe.each(backends)('%s', (_name, refuse) => {
  it('refuses a job with policy.blackout, with the reason', () => {
    const reasons = refuse(entry(windows));
    expect(reasons.filter((r) => REASON.test(r))).toHaveLength(1);
  });
  it('accepts the same job without it', () => {
    expect(refuse(entry({})).filter((r) => /blackout/.test(r))).toEqual([]);
  });
});

describe('L (the last day of the month) is refused by every backend, with the reason', () => {
  const L =
    /uses L \(the last day of the month\) in its day-of-month field, which host-mode backends do not translate; run this job under `cronix serve`/;
  const parsedL = () => {
    const r = parseSchedule('0 6 L * *');
    if (!r.ok) throw new Error(r.error);
    return r.schedule;
  };
  const reasonOf = (r: { ok: boolean; reason?: string }): string => (r.ok ? '' : (r.reason ?? ''));
  it.each([
    ['crontab', () => reasonOf(crontabSchedule('0 6 L * *', 'UTC', 'UTC', NOW))],
    ['systemd', () => reasonOf(toOnCalendar(parsedL(), 'UTC', { now: NOW }))],
    ['kubernetes', () => reasonOf(kubernetesSchedule('0 6 L * *', 'UTC'))],
    ['aws', () => reasonOf(toAwsSchedule('0 6 L * *', 'UTC', NOW))],
  ])('%s', (_name, reason) => {
    expect(reason()).toMatch(L);
  });
  it('the same schedule with day 28-31 listed is translated (the refusal is the L)', () => {
    expect(crontabSchedule('0 6 28-31 * *', 'UTC', 'UTC', NOW).ok).toBe(true);
    expect(kubernetesSchedule('0 6 28-31 * *', 'UTC').ok).toBe(true);
  });
});
