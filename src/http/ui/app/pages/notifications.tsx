/**
 * Notifications (SPEC §12): what was sent to whom about which job, and how its
 * delivery went — newest first, filtered by status, refreshed while pending.
 */
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { errorText, Notice, useLoad, When } from '../components.js';
import { LOCAL_ZONE } from '../format.js';
import { Link } from '../router.js';

/** A notification as the API returns it. */
interface NotificationJson {
  id: string;
  event: 'failed' | 'missed' | 'recovered' | 'slow';
  app: string;
  job: string;
  run_id: string;
  notifier: string;
  notifier_type: 'webhook' | 'smtp';
  count: number;
  text: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  ended_at: string | null;
}

const TONE = { delivered: 'ok', pending: 'live', failed: 'bad' } as const;

/** The page. */
export function NotificationsPage() {
  const [status, setStatus] = useState('');
  const { data, error, reload } = useLoad(
    () =>
      get<{ notifications: NotificationJson[] }>(
        `/api/v1/notifications?limit=200${status ? `&status=${status}` : ''}`,
      ),
    [status],
  );
  const pending = data?.notifications.some((n) => n.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const t = setInterval(reload, 2000);
    return () => clearInterval(t);
  }, [pending]);
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
        <table class="runs">
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
                <td>
                  <When iso={n.created_at} zone={LOCAL_ZONE} />
                </td>
                <td>
                  {n.event}
                  {n.count > 1 ? ` ×${n.count}` : ''}
                </td>
                <td>
                  <Link href={`/jobs/${encodeURIComponent(n.app)}/${encodeURIComponent(n.job)}`}>
                    {n.app}/{n.job}
                  </Link>{' '}
                  <Link href={`/runs/${encodeURIComponent(n.run_id)}`}>run</Link>
                </td>
                <td>
                  {n.notifier} <span class="muted">({n.notifier_type})</span>
                </td>
                <td>
                  <span class={`badge tone-${TONE[n.status]}`}>{n.status}</span>
                  {n.last_error && <div class="muted">{n.last_error}</div>}
                </td>
                <td>{n.attempts}</td>
                <td>{n.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
