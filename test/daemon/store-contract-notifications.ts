/**
 * The notification part of the store contract (SPEC §12), run by every store
 * through `store-contract.ts`: grouping decided in the store's transaction from
 * the job's open groups, one notification per event key, the delivery queue.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { planEvent, type NotifyTarget } from '../../src/daemon/notify-plan.js';
import type { NotificationRecord, RunRecord, Store } from '../../src/daemon/store/types.js';
import { newRun, T0 } from './store-fixtures.js';

const target: NotifyTarget = {
  notifier: 'chat',
  type: 'webhook',
  on: ['failed', 'missed', 'recovered'],
  repeatMs: 60_000,
  slowAfterSeconds: 600,
};

const ended = (outcome: RunRecord['outcome']): RunRecord => ({
  ...newRun({ phase: 'ended', outcome, endedAt: T0 }),
  seq: 0,
});

/** Registers the tests; `store` is the migrated store of the current test. */
export function notificationContract(store: () => Store): void {
  const record = (kind: 'failed' | 'missed' | 'success', run: RunRecord, at: number) =>
    store().recordNotifications(run.app, run.job, (groups) =>
      planEvent(kind, run, at, [target], groups, randomUUID),
    );

  it('notifications: first failure, grouped repeats with their count, one recovery', async () => {
    const first = await record('failed', ended('retries_exhausted'), T0);
    expect(first.map((n) => [n.event, n.count, n.status])).toEqual([['failed', 1, 'pending']]);
    expect(await record('failed', ended('crashed'), T0 + 1000)).toEqual([]);
    expect(await record('missed', ended('missed'), T0 + 2000)).toHaveLength(1); // its own group
    expect(await record('failed', ended('app_rejected'), T0 + 3000)).toEqual([]);
    const repeat = await record('failed', ended('internal_error'), T0 + 61_000);
    expect(repeat.map((n) => [n.event, n.count])).toEqual([['failed', 3]]);
    const recovered = await record('success', ended('success'), T0 + 62_000);
    expect(recovered.map((n) => [n.event, n.count])).toEqual([['recovered', 5]]);
    expect(await record('success', ended('success'), T0 + 63_000)).toEqual([]);
    const listed = await store().listNotifications({});
    expect(listed.map((n) => n.event)).toEqual(['recovered', 'failed', 'missed', 'failed']);
    for (let i = 1; i < listed.length; i++) expect(listed[i]!.seq).toBeLessThan(listed[i - 1]!.seq);
    expect(await store().getNotification(first[0]!.id)).toEqual(first[0]);
    expect(await store().listNotifications({ event: 'failed', limit: 1 })).toEqual([repeat[0]]);
    expect(
      await store().listNotifications({ beforeSeq: listed[1]!.seq, status: 'pending' }),
    ).toEqual(listed.slice(2));
  });

  it('notifications: notificationsByIds reads the ones that exist, by seq', async () => {
    const [first] = await record('failed', ended('retries_exhausted'), T0);
    const [second] = await record('missed', ended('missed'), T0 + 1000);
    expect(await store().notificationsByIds([second!.id, 'missing', first!.id])).toEqual([
      first,
      second,
    ]);
    expect(await store().notificationsByIds([])).toEqual([]);
  });

  it('notifications: one per event key, whatever records it again', async () => {
    const run = ended('retries_exhausted');
    const plan = (at: number) =>
      store().recordNotifications(run.app, run.job, () => ({
        groups: [],
        notifications: planEvent('failed', run, at, [target], [], randomUUID).notifications,
      }));
    expect(await plan(T0)).toHaveLength(1);
    expect(await plan(T0 + 1)).toEqual([]);
    expect(await store().listNotifications({})).toHaveLength(1);
  });

  it('notifications: the delivery queue hands out due ones and records attempts', async () => {
    const [a] = await record('failed', ended('retries_exhausted'), T0);
    const [b] = await record('failed', { ...ended('retries_exhausted'), job: 'other' }, T0 + 5);
    expect(await store().nextNotificationAt()).toBe(T0);
    expect((await store().dueNotifications(T0, 10)).map((n) => n.id)).toEqual([a!.id]);
    expect((await store().dueNotifications(T0 + 5, 10)).map((n) => n.id)).toEqual([a!.id, b!.id]);
    const retry = {
      status: 'pending' as const,
      attempts: 1,
      lastStatus: 503,
      lastError: 'HTTP 503',
      nextAttemptAt: T0 + 2000,
      endedAt: null,
    };
    expect(await store().updateNotification(a!.id, retry)).toBe(true);
    expect(await store().nextNotificationAt()).toBe(T0 + 5);
    expect((await store().dueNotifications(T0 + 1000, 10)).map((n) => n.id)).toEqual([b!.id]);
    const done = {
      ...retry,
      status: 'delivered' as const,
      attempts: 2,
      lastStatus: 200,
      lastError: null,
      nextAttemptAt: null,
      endedAt: T0 + 2001,
    };
    expect(await store().updateNotification(a!.id, done)).toBe(true);
    expect(await store().updateNotification(a!.id, done)).toBe(false); // no longer pending
    expect(await store().getNotification(a!.id)).toMatchObject({ ...done, seq: a!.seq });
    await store().updateNotification(b!.id, { ...done, status: 'failed', lastError: 'HTTP 404' });
    expect(await store().nextNotificationAt()).toBeNull();
    expect(await store().dueNotifications(T0 + 10_000_000, 10)).toEqual([]);
  });

  it('notifications: retention deletes delivered and failed ones that ended before the cut-off, never pending ones', async () => {
    const jobs = ['delivered-old', 'failed-old', 'delivered-new', 'pending-old'];
    const made: NotificationRecord[] = [];
    for (const job of jobs)
      made.push((await record('failed', { ...ended('crashed'), job }, T0))[0]!);
    const end = (n: NotificationRecord, status: 'delivered' | 'failed', endedAt: number) =>
      store().updateNotification(n.id, {
        status,
        attempts: 1,
        lastStatus: status === 'delivered' ? 200 : 404,
        lastError: null,
        nextAttemptAt: null,
        endedAt,
      });
    await end(made[0]!, 'delivered', T0 + 1000);
    await end(made[1]!, 'failed', T0 + 2000);
    await end(made[2]!, 'delivered', T0 + 9000);
    // made[3] stays pending, created at T0: old, but not delivered yet
    expect(await store().pruneNotifications(T0 + 5000)).toBe(2);
    const left = await store().listNotifications({});
    expect(left.map((n) => n.job).sort()).toEqual(['delivered-new', 'pending-old']);
    expect(await store().pruneNotifications(T0 + 5000)).toBe(0);
    expect((await store().dueNotifications(T0, 10)).map((n) => n.id)).toEqual([made[3]!.id]);
  });
}
