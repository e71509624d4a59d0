/**
 * `GET /api/v1/notifications` (SPEC §12): recorded notifications, newest first,
 * with their delivery state — event, notifier, status, attempts, last status and
 * error. Never a notifier's URL, credentials or signature.
 */
import type { Hono } from 'hono';
import { echo, MAX_ECHO } from '../contract/echo.js';
import { NOTIFY_EVENTS, type NotifyEvent } from '../contract/manifest/defaults.js';
import { rfc3339Utc } from '../contract/run.js';
import {
  NOTIFICATION_STATUSES,
  type NotificationFilter,
  type NotificationRecord,
  type NotificationStatus,
  type Store,
} from '../daemon/store/types.js';
import { BadRequest } from './serialize.js';

const time = (ms: number | null): string | null => (ms === null ? null : rfc3339Utc(ms));

/** A notification as the API returns it. */
export function notificationJson(n: NotificationRecord): Record<string, unknown> {
  return {
    id: n.id,
    event: n.event,
    app: n.app,
    job: n.job,
    run_id: n.runId,
    notifier: n.notifier,
    notifier_type: n.notifierType,
    count: n.count,
    text: n.text,
    status: n.status,
    attempts: n.attempts,
    last_status: n.lastStatus,
    last_error: n.lastError,
    created_at: time(n.createdAt),
    next_attempt_at: time(n.nextAttemptAt),
    ended_at: time(n.endedAt),
  };
}

async function filterOf(q: Record<string, string>, store: Store): Promise<NotificationFilter> {
  const filter: NotificationFilter = {};
  for (const k of Object.keys(q))
    if (!['app', 'job', 'event', 'status', 'limit', 'before'].includes(k))
      throw new BadRequest(k.slice(0, MAX_ECHO), `unknown query parameter ${echo(k)}`);
  if (q['app']) filter.app = q['app'];
  if (q['job']) filter.job = q['job'];
  if (q['event'] !== undefined) {
    if (!(NOTIFY_EVENTS as readonly string[]).includes(q['event']))
      throw new BadRequest(
        'event',
        `expected one of ${NOTIFY_EVENTS.join(', ')}, found ${echo(q['event'])}`,
      );
    filter.event = q['event'] as NotifyEvent;
  }
  if (q['status'] !== undefined) {
    if (!(NOTIFICATION_STATUSES as readonly string[]).includes(q['status']))
      throw new BadRequest(
        'status',
        `expected one of ${NOTIFICATION_STATUSES.join(', ')}, found ${echo(q['status'])}`,
      );
    filter.status = q['status'] as NotificationStatus;
  }
  if (q['limit'] !== undefined) {
    const n = Number(q['limit']);
    if (!/^\d+$/.test(q['limit']) || n < 1 || n > 1000)
      throw new BadRequest(
        'limit',
        `expected an integer from 1 to 1000, found ${echo(q['limit'])}`,
      );
    filter.limit = n;
  }
  if (q['before'] !== undefined) {
    const before = await store.getNotification(q['before']);
    if (!before)
      throw new BadRequest(
        'before',
        `expected the id of a notification (the last one of the previous page), found ${echo(q['before'])}`,
      );
    filter.beforeSeq = before.seq;
  }
  return filter;
}

/** Registers the route. */
export function registerNotifications(app: Hono, store: Store): void {
  app.get('/api/v1/notifications', async (c) => {
    const list = await store.listNotifications(await filterOf(c.req.query(), store));
    return c.json({ notifications: list.map(notificationJson) });
  });
}
