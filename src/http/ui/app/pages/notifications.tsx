/**
 * Notifications (SPEC §12): what was sent to whom about which job, and how its
 * delivery went — newest first, filtered by status, updated live (the event stream).
 */
import { useState } from 'preact/hooks';
import { get, type NotificationJson } from '../api.js';
import { errorText, Notice, useLoad, When } from '../components.js';
import { LOCAL_ZONE } from '../format.js';
import { useLive } from '../live.js';
import { jobPath, Link } from '../router.js';

/** Notifications listed (the newest). */
const LIMIT = 200;

const TONE = { delivered: 'ok', pending: 'live', failed: 'bad' } as const;

/** The page. */
export function NotificationsPage() {
  const [status, setStatus] = useState('');
  const { data, error, reload, set } = useLoad(
    () =>
      get<{ notifications: NotificationJson[] }>(
        `/api/v1/notifications?limit=${LIMIT}${status ? `&status=${status}` : ''}`,
      ),
    [status],
  );
  // live: a new notification goes on top, a delivery attempt updates its row in place
  useLive((e) => {
    if (e.type === 'reset') return reload();
    if (e.type !== 'notification') return;
    const n = e.notification;
    const shown = status === '' || n.status === status;
    set((d) => {
      const at = d.notifications.findIndex((x) => x.id === n.id);
      const list = [...d.notifications];
      if (at >= 0) {
        if (shown) list[at] = n;
        else list.splice(at, 1);
      } else if (shown) list.unshift(n);
      return { notifications: list.slice(0, LIMIT) };
    });
  });
  return (
    <main>
      <h1>Notifications</h1>
      <p class="muted">
        Failure, missed, recovery and slow-run messages to webhooks and e-mail; pending ones are
        retried for up to 10 minutes.
      </p>
      <label>
        Status{' '}
        <select value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          <option value="pending">pending</option>
          <option value="delivered">delivered</option>
          <option value="failed">failed</option>
        </select>
      </label>
      <Notice notice={error ? { kind: 'error', text: errorText(error) } : null} />
      {data && data.notifications.length === 0 && <p>No notifications yet.</p>}
      {data && data.notifications.length > 0 && (
        <table class="runs stack">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Event</th>
              <th scope="col">Job</th>
              <th scope="col">Notifier</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {data.notifications.map((n) => (
              <tr key={n.id}>
                <td data-label="Created">
                  <When iso={n.created_at} zone={LOCAL_ZONE} />
                </td>
                <td data-label="Event">
                  {n.event}
                  {n.count > 1 ? ` ×${n.count}` : ''}
                </td>
                <td data-label="Job">
                  <span>
                    <Link href={jobPath(n.app, n.job)}>{`${n.app}/${n.job}`}</Link>{' '}
                    <Link href={`/runs/${encodeURIComponent(n.run_id)}`}>run</Link>
                  </span>
                </td>
                <td data-label="Notifier">
                  <span>
                    {n.notifier} <span class="muted">({n.notifier_type})</span>
                  </span>
                </td>
                <td data-label="Status">
                  <span>
                    <span class={`badge tone-${TONE[n.status]}`}>{n.status}</span>
                    {n.last_error && <span class="err-line">{n.last_error}</span>}
                  </span>
                </td>
                <td data-label="Attempts">{n.attempts}</td>
                <td data-label="Message">{n.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
