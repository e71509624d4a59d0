/**
 * The notification outbox of the store seam (SPEC §12): records, grouping state and the
 * {@link NotificationStore} every store implements (see `types.ts`).
 */
import type { NotifierType, NotifyEvent } from '../../contract/manifest/types.js';
import type { GroupState } from '../../notify/group.js';

/** Where a notification's delivery is: waiting for (another) attempt, or done either way. */
export type NotificationStatus = 'pending' | 'delivered' | 'failed';

/** Delivery states, for filters and the OpenAPI document. */
export const NOTIFICATION_STATUSES: readonly NotificationStatus[] = [
  'pending',
  'delivered',
  'failed',
];

/** One notification: an event for one notifier, its message and its delivery. Times epoch ms. */
export interface NotificationRecord {
  /** Position (monotonic, assigned by the store): newest first in lists. */
  seq: number;
  /** UUIDv7; sent as `X-Cron-Notification-Id` so receivers can dedupe. */
  id: string;
  /** `<run id>/<event>/<notifier>`: one notification per event and notifier, ever. */
  eventKey: string;
  event: NotifyEvent;
  app: string;
  job: string;
  runId: string;
  notifier: string;
  notifierType: NotifierType;
  /** Events this message stands for (grouping). */
  count: number;
  /** The one human line. */
  text: string;
  /** The JSON body, exactly as sent on every attempt. */
  body: string;
  status: NotificationStatus;
  attempts: number;
  /** HTTP status (webhook) or SMTP reply code of the last attempt, when there was one. */
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  /** When a pending notification is tried next; null once it is done. */
  nextAttemptAt: number | null;
  /** When it was delivered or given up. */
  endedAt: number | null;
}

/** A notification to record; the store assigns `seq`. */
export type NewNotification = Omit<NotificationRecord, 'seq'>;

/** One open grouping state: a job's `failed` or `missed` events for one notifier. */
export interface NotifyGroupRow {
  notifier: string;
  kind: 'failed' | 'missed';
  state: GroupState;
}

/** What an event changes, decided from the job's open groups (see {@link NotificationStore}). */
export interface NotifyPlan {
  /** Groups to write; a closed state deletes the row. */
  groups: NotifyGroupRow[];
  /** Notifications to record; one whose `eventKey` exists is skipped. */
  notifications: NewNotification[];
}

/** Fields of a delivery attempt's result. */
export type NotificationPatch = Pick<
  NotificationRecord,
  'status' | 'attempts' | 'lastStatus' | 'lastError' | 'nextAttemptAt' | 'endedAt'
>;

/** Filter of {@link NotificationStore.listNotifications}; newest first. */
export interface NotificationFilter {
  app?: string;
  job?: string;
  event?: NotifyEvent;
  status?: NotificationStatus;
  beforeSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

/**
 * The notification outbox (SPEC §12). Grouping is a store operation: an event's
 * decision reads the job's open groups and writes the groups and the notifications
 * in **one** transaction (fenced by the leader's epoch in a cluster), so one event
 * is grouped and recorded once whatever else runs. Delivery state is durable, so a
 * restarted daemon (or a new leader) delivers what is still pending.
 */
export interface NotificationStore {
  /**
   * In one transaction: reads the open groups of the job, calls `plan` with them
   * (synchronously), writes its groups and inserts its notifications (skipping any
   * whose `eventKey` is already recorded). Returns the notifications inserted.
   */
  recordNotifications(
    app: string,
    job: string,
    plan: (groups: NotifyGroupRow[]) => NotifyPlan,
  ): Promise<NotificationRecord[]>;
  /** Pending notifications whose next attempt is at or before `now`, soonest first. */
  dueNotifications(now: number, limit: number): Promise<NotificationRecord[]>;
  /** The earliest next attempt of a pending notification, or null when none is pending. */
  nextNotificationAt(): Promise<number | null>;
  /** Records a delivery attempt of a pending notification; false when it is not pending. */
  updateNotification(id: string, patch: NotificationPatch): Promise<boolean>;
  listNotifications(filter: NotificationFilter): Promise<NotificationRecord[]>;
  getNotification(id: string): Promise<NotificationRecord | null>;
  /** The notifications of `ids` that exist, by `seq`, in one query (a standby's live view). */
  notificationsByIds(ids: readonly string[]): Promise<NotificationRecord[]>;
  /**
   * Retention (`--retention-days`): deletes the notifications whose delivery ended (delivered or
   * failed) before `endedBefore`; pending ones are kept whatever their age. Returns the count.
   */
  pruneNotifications(endedBefore: number): Promise<number>;
}
