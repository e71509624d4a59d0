/**
 * Audit (SPEC §18): who did what, to which job or run, from where (API, CLI, web UI; a
 * standby's forwarded verbs say so), and how it ended — newest first, filtered by who and
 * action. Refreshed by its button and when a run changes (most verbs change one).
 */
import { useState } from 'preact/hooks';
import { get, type AuditJson } from '../api.js';
import { errorText, Notice, useLoad, useThrottled, When } from '../components.js';
import { LOCAL_ZONE } from '../format.js';
import { useLive } from '../live.js';
import { jobPath, Link } from '../router.js';

/** Rows listed (the newest). */
const LIMIT = 200;

const TONE = { ok: 'ok', refused: 'bad', failed: 'bad' } as const;

/** The page. */
export function AuditPage() {
  const [who, setWho] = useState('');
  const [action, setAction] = useState('');
  const { data, error, reload } = useLoad(() => {
    const q = new URLSearchParams({ limit: String(LIMIT) });
    if (who.trim()) q.set('who', who.trim());
    if (action.trim()) q.set('action', action.trim());
    return get<{ audit: AuditJson[] }>(`/api/v1/audit?${q.toString()}`);
  }, [who, action]);
  const later = useThrottled(reload, 1000);
  useLive((e) => {
    if (e.type === 'reset' || e.type === 'run' || e.type === 'job') later();
  });
  return (
    <main>
      <h1>Audit</h1>
      <p class="muted">
        Every change made through the API, the command line or this UI, with who made it. Kept as
        long as runs.
      </p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Who{' '}
          <input
            name="who"
            value={who}
            onChange={(e) => setWho((e.target as HTMLInputElement).value)}
          />
        </label>{' '}
        <label>
          Action{' '}
          <input
            name="action"
            value={action}
            onChange={(e) => setAction((e.target as HTMLInputElement).value)}
          />
        </label>{' '}
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </form>
      <Notice notice={error ? { kind: 'error', text: errorText(error) } : null} />
      {data && data.audit.length === 0 && <p>Nothing recorded yet.</p>}
      {data && data.audit.length > 0 && (
        <table class="runs stack audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">From</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {data.audit.map((r) => (
              <tr key={r.seq}>
                <td data-label="When">
                  <When iso={r.at} zone={LOCAL_ZONE} />
                </td>
                <td data-label="Who">
                  <span>
                    {r.who} <span class="muted">({r.role ?? 'no auth'})</span>
                  </span>
                </td>
                <td data-label="Action">{r.action}</td>
                <td data-label="Target">
                  <span>
                    {r.app && r.job ? (
                      <Link href={jobPath(r.app, r.job)}>{`${r.app}/${r.job}`}</Link>
                    ) : (
                      (r.app ?? '')
                    )}{' '}
                    {r.run && <Link href={`/runs/${encodeURIComponent(r.run)}`}>run</Link>}
                  </span>
                </td>
                <td data-label="From">
                  {r.from}
                  {r.forwarded ? ` via ${r.replica ?? 'a standby'}` : ''}
                  {r.address ? <span class="muted"> {r.address}</span> : null}
                </td>
                <td data-label="Result">
                  <span>
                    <span class={`badge tone-${TONE[r.result]}`}>
                      {r.result} {r.status}
                    </span>
                    {r.detail && <span class="err-line">{r.detail}</span>}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
