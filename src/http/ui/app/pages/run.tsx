/**
 * Run (SPEC §13): run key, trigger, phase, outcome, error, every attempt,
 * the request target and headers sent (never a signature or secret), the
 * leader epoch when the store records one, the command output for command
 * jobs (when the daemon serves `/api/v1/runs/{id}/log`), and `Cancel`
 * (confirmed first) or `Replay` — output and actions for a session that may have them
 * (`access.ts`).
 */
import { useState } from 'preact/hooks';
import { may } from '../access.js';
import {
  apiPaths,
  get,
  post,
  seg,
  type Admission,
  type JobDetailJson,
  type RunJson,
} from '../api.js';
import {
  ConfirmButton,
  errorText,
  Notice,
  OutcomeBadge,
  ReadOnly,
  triggerText,
  useLoad,
  When,
} from '../components.js';
import { duration, runDuration } from '../format.js';
import { useLive } from '../live.js';
import { Link, navigate } from '../router.js';

interface SentRequest {
  sent: boolean;
  method: string;
  url: string;
  body_bytes: number;
  headers: Record<string, string>;
  note: string;
}

function CommandOutput({ run }: { run: RunJson }) {
  const log = useLoad(async () => {
    if (!may('GET /api/v1/runs/{id}/log', run.app)) return null;
    if (!(await apiPaths()).has('/api/v1/runs/{id}/log')) return null;
    const res = await fetch(`/api/v1/runs/${seg(run.id)}/log`, { credentials: 'same-origin' });
    return res.ok ? await res.text() : null;
  }, [run.id, run.phase]);
  if (log.data === null || log.data === undefined) return null;
  return (
    <section aria-labelledby="output-h">
      <h2 id="output-h">Command output</h2>
      {run.output_truncated && (
        <p class="notice notice-error">The output was cut at the job’s max_output_bytes.</p>
      )}
      {run.output_lost && (
        <p class="notice notice-error">
          Part of the output could not be written ({run.output_error}); what follows that point was
          lost.
        </p>
      )}
      <pre class="output" tabIndex={0}>
        {log.data || '(no output)'}
      </pre>
    </section>
  );
}

export function RunPage({ id }: { id: string }) {
  const path = `/api/v1/runs/${seg(id)}`;
  const run = useLoad(() => get<RunJson>(path), [path]);
  // the job says what the run did: an HTTP job sent a request, a command job captured output;
  // asking for the other one would only answer 404
  const detail = useLoad(async () => {
    const r = run.data;
    if (!r) return null;
    return get<JobDetailJson>(`/api/v1/jobs/${seg(r.app)}/${seg(r.job)}`).catch(() => null);
  }, [run.data?.app, run.data?.job]);
  const sent = useLoad(async () => {
    if (!detail.data?.request) return null;
    return get<SentRequest>(`${path}/request`).catch(() => null);
  }, [path, detail.data]);
  const [notice, setNotice] = useState<{
    kind: 'ok' | 'error';
    text: preact.ComponentChildren;
  } | null>(null);
  useLive((e) => {
    if (e.type === 'reset') return run.reload();
    if (e.type === 'run' && e.run.id === id) run.set(() => e.run);
  });
  const r = run.data;
  const tz = detail.data?.timezone ?? 'UTC';
  const cancel = async () => {
    try {
      const res = await post<{ run: RunJson }>(`${path}/cancel`);
      run.set(() => res.run);
      setNotice({ kind: 'ok', text: 'Cancelled: the run is stopped.' });
    } catch (err) {
      setNotice({ kind: 'error', text: `Cancel failed: ${errorText(err)}` });
    }
  };
  const replay = async () => {
    try {
      const a = await post<Admission>(`${path}/replay`);
      setNotice({
        kind: 'ok',
        text: (
          <>
            Replayed as <Link href={`/runs/${a.run.id}`}>run {a.run.id}</Link> ({a.admission}).
          </>
        ),
      });
    } catch (err) {
      setNotice({ kind: 'error', text: `Replay failed: ${errorText(err)}` });
    }
  };
  if (run.error !== null && !r)
    return (
      <main>
        <h1>Run {id}</h1>
        <p class="notice notice-error" role="alert">
          {errorText(run.error)}
        </p>
      </main>
    );
  if (!r)
    return (
      <main>
        <p class="muted">Loading…</p>
      </main>
    );
  const jobHref = `/jobs/${encodeURIComponent(r.app)}/${encodeURIComponent(r.job)}`;
  // a host's run is the host's to repeat; an open run may be cancelled, an ended one replayed
  const action =
    r.trigger === 'host'
      ? null
      : r.phase !== 'ended'
        ? may('POST /api/v1/runs/{id}/cancel', r.app) && (
            <ConfirmButton
              label="Cancel"
              question={
                r.phase === 'running'
                  ? 'Cancel this run? Its request is aborted now and the run ends stopped.'
                  : 'Cancel this run? It will never start and ends stopped.'
              }
              confirmLabel="Cancel the run"
              onConfirm={() => void cancel()}
            />
          )
        : may('POST /api/v1/runs/{id}/replay', r.app) && (
            <button type="button" onClick={() => void replay()}>
              Replay
            </button>
          );
  return (
    <main>
      <p class="crumbs">
        <Link href="/jobs">Jobs</Link> / <Link href={jobHref}>{`${r.app}/${r.job}`}</Link>
      </p>
      <h1>
        Run <code>{r.id}</code> <OutcomeBadge run={r} />
      </h1>
      <ReadOnly app={r.app} />
      <div class="toolbar">
        {action}
        <button type="button" class="link" onClick={() => navigate(jobHref)}>
          All runs of this job
        </button>
      </div>
      <Notice notice={notice} />
      <dl class="facts">
        <dt>Run key</dt>
        <dd>
          <code>{r.run_key}</code>
        </dd>
        <dt>Trigger</dt>
        <dd>{triggerText(r)}</dd>
        {r.trigger === 'host' && (
          <>
            <dt>Host</dt>
            <dd>{r.host ?? '— (no host reported this fire)'}</dd>
            <dt>Exit code</dt>
            <dd>{r.exit_code ?? '—'}</dd>
            {r.clock_skewed && (
              <>
                <dt>Clock</dt>
                <dd class="err">{`the host's clock was ${r.clock_skew_seconds ?? '?'} s off the server's`}</dd>
              </>
            )}
            {r.lateness_seconds != null && (
              <>
                <dt>Late</dt>
                <dd class="err">{`started ${r.lateness_seconds} s after its fire time`}</dd>
              </>
            )}
          </>
        )}
        <dt>Phase</dt>
        <dd>
          {r.phase}
          {r.waiting_for && <span class="muted"> · waiting for {r.waiting_for}</span>}
        </dd>
        <dt>Outcome</dt>
        <dd>{r.outcome ?? '— (not ended)'}</dd>
        <dt>Error</dt>
        <dd class={r.error ? 'err' : ''}>{r.error ?? 'none'}</dd>
        <dt>Scheduled</dt>
        <dd>
          <When iso={r.scheduled_time} zone={tz} />
        </dd>
        {r.due_at && (
          <>
            <dt>Due</dt>
            <dd>
              <When iso={r.due_at} zone={tz} />
            </dd>
          </>
        )}
        <dt>Started</dt>
        <dd>
          <When iso={r.started_at} zone={tz} />
        </dd>
        <dt>Ended</dt>
        <dd>
          <When iso={r.ended_at} zone={tz} />
        </dd>
        <dt>Duration</dt>
        <dd>{duration(runDuration(r))}</dd>
        <dt>Last status</dt>
        <dd>{r.last_status ?? '—'}</dd>
        {r.leader_epoch !== undefined && (
          <>
            <dt>Leader epoch</dt>
            <dd>{r.leader_epoch ?? '—'}</dd>
          </>
        )}
      </dl>
      <section aria-labelledby="attempts-h">
        <h2 id="attempts-h">Attempts</h2>
        <table class="compact stack">
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {r.attempt_log.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  No attempt was sent.
                </td>
              </tr>
            )}
            {r.attempt_log.map((a) => (
              <tr key={a.attempt}>
                <td data-label="Attempt" class="num">
                  {a.attempt}
                </td>
                <td data-label="Started">
                  <When iso={a.started_at} zone={tz} />
                </td>
                <td data-label="Status">
                  {a.status ?? (a.exit_code != null ? `exit ${a.exit_code}` : '—')}
                </td>
                <td data-label="Duration" class="num">
                  {duration(a.duration_ms)}
                </td>
                <td data-label="Error">{a.error ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {r.attempt_log.map(
          (a) =>
            (a.response != null || a.traceparent != null) && (
              <details key={a.attempt} class="attempt-response">
                <summary>
                  Attempt {a.attempt}: {a.status !== null ? `HTTP ${a.status}` : 'no response'}
                </summary>
                {a.traceparent != null && (
                  <p>
                    traceparent sent <code>{a.traceparent}</code>
                  </p>
                )}
                {a.response != null && (
                  <pre class="output" tabIndex={0}>
                    {a.response || '(empty body)'}
                  </pre>
                )}
              </details>
            ),
        )}
      </section>
      {sent.data && (
        <section aria-labelledby="request-h">
          <h2 id="request-h">Request</h2>
          <p>
            <code>
              {sent.data.method} {sent.data.url}
            </code>{' '}
            ({sent.data.body_bytes} bytes of body)
          </p>
          <table class="compact headers">
            <caption>{sent.data.sent ? 'Headers sent' : 'Headers it will send'}</caption>
            <thead>
              <tr>
                <th scope="col">Header</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(sent.data.headers).map(([k, v]) => (
                <tr key={k}>
                  <td>
                    <code>{k}</code>
                  </td>
                  <td>
                    <code>{v}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="muted">{sent.data.note}</p>
        </section>
      )}
      {detail.data?.command && <CommandOutput run={r} />}
    </main>
  );
}
