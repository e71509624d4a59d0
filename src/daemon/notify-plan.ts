/**
 * What one job event notifies (SPEC §12), decided from the job's open groups
 * inside the store's transaction ({@link NotificationStore.recordNotifications}).
 * Pure: the grouping rules are `src/notify/group.ts`, the message
 * `src/notify/message.ts`.
 */
import type { NotifierType, NotifyEvent } from '../contract/manifest/types.js';
import { CLOSED, onProblem, onSuccess } from '../notify/group.js';
import { notifyPayload } from '../notify/message.js';
import type { NewNotification, NotifyGroupRow, NotifyPlan, RunRecord } from './store/types.js';

/** One notify entry of a job, with its notifier's type and every default applied. */
export interface NotifyTarget {
  notifier: string;
  type: NotifierType;
  on: readonly NotifyEvent[];
  repeatMs: number;
  slowAfterSeconds: number;
}

/** An event of a job: a problem, a success (maybe a recovery) or a slow run. */
export type JobEventKind = 'failed' | 'missed' | 'success' | 'slow';

/** Outcomes that are `failed` (SPEC §12). */
export const FAILED_OUTCOMES: ReadonlySet<string> = new Set([
  'app_rejected',
  'retries_exhausted',
  'crashed',
  'internal_error',
]);

/** The event an ended run is, or null (skipped, queue_full, stopped, duplicate never notify). */
export function eventOfRun(run: RunRecord): JobEventKind | null {
  if (run.outcome === 'success') return 'success';
  if (run.outcome === 'missed') return 'missed';
  if (run.outcome !== null && FAILED_OUTCOMES.has(run.outcome)) return 'failed';
  return null;
}

/** Plans one event of one job for every target. */
export function planEvent(
  kind: JobEventKind,
  run: RunRecord,
  at: number,
  targets: readonly NotifyTarget[],
  groups: readonly NotifyGroupRow[],
  newId: () => string,
): NotifyPlan {
  const plan: NotifyPlan = { groups: [], notifications: [] };
  const add = (t: NotifyTarget, event: NotifyEvent, count: number): void => {
    const payload = notifyPayload(event, run.app, run.job, run, count, {
      slowAfterSeconds: t.slowAfterSeconds,
    });
    const n: NewNotification = {
      id: newId(),
      eventKey: `${run.id}/${event}/${t.notifier}`,
      event,
      app: run.app,
      job: run.job,
      runId: run.id,
      notifier: t.notifier,
      notifierType: t.type,
      count,
      text: payload.text,
      body: JSON.stringify(payload),
      status: 'pending',
      attempts: 0,
      lastStatus: null,
      lastError: null,
      createdAt: at,
      nextAttemptAt: at,
      endedAt: null,
    };
    plan.notifications.push(n);
  };
  for (const t of targets) {
    const mine = groups.filter((g) => g.notifier === t.notifier);
    if (kind === 'failed' || kind === 'missed') {
      const state = mine.find((g) => g.kind === kind)?.state ?? CLOSED;
      const d = onProblem(state, at, t.repeatMs, t.on.includes(kind));
      plan.groups.push({ notifier: t.notifier, kind, state: d.next });
      if (d.send) add(t, kind, d.count);
    } else if (kind === 'success') {
      const r = onSuccess(
        mine.map((g) => g.state),
        t.on.includes('recovered'),
      );
      if (!r.recovered) continue;
      for (const g of mine) plan.groups.push({ notifier: t.notifier, kind: g.kind, state: CLOSED });
      if (r.send) add(t, 'recovered', r.count);
    } else if (t.on.includes('slow')) add(t, 'slow', 1);
  }
  return plan;
}
