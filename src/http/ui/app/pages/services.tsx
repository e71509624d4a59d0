/**
 * Services (SPEC §17): every supervised service with its instances — state, pid, uptime,
 * restarts, last exit — the `Start`, `Stop` and `Restart` buttons (destructive ones confirm
 * first), and the live output of one instance's current start. Kept fresh by the event stream
 * (a start or exit is a run) and a short poll (states and uptimes change without one). Buttons
 * and output are shown to a session that may use them on the service's app (`access.ts`).
 */
import { useEffect, useState } from 'preact/hooks';
import { may } from '../access.js';
import { get, post } from '../api.js';
import { ConfirmButton, errorText, Notice, ReadOnly, useLoad } from '../components.js';
import { useLive } from '../live.js';
import { Link } from '../router.js';

interface InstanceJson {
  instance: number;
  state: string;
  pid: number | null;
  run_id: string | null;
  started_at: string | null;
  uptime_seconds: number | null;
  restarts: number;
  ready: boolean | null;
  crash_loop: boolean;
  next_start_at: string | null;
  last_exit: { at: string | null; outcome: string; error: string | null } | null;
}

interface ServiceJson {
  app: string;
  service: string;
  argv: string[];
  instances: number;
  crash_loop: boolean;
  ready_check: string | null;
  instance_states: InstanceJson[];
}

const seg = encodeURIComponent;
const POLL_MS = 2000;
const TONE: Record<string, string> = {
  ready: 'ok',
  running: 'ok',
  starting: 'live',
  stopping: 'live',
  backoff: 'bad',
  stopped: 'muted',
};

function uptime(s: number | null): string {
  if (s === null) return '–';
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The live output of one start (its run's log), polled while shown. */
function Output({ runId, label }: { runId: string; label: string }) {
  const [text, setText] = useState<string | null>(null);
  useEffect(() => {
    let stop = false;
    const load = async (): Promise<void> => {
      const res = await fetch(`/api/v1/runs/${seg(runId)}/log`, { credentials: 'same-origin' });
      if (!stop) setText(res.ok ? await res.text() : `(no output: HTTP ${res.status})`);
    };
    void load();
    const t = setInterval(() => void load(), 1000);
    return () => {
      stop = true;
      clearInterval(t);
    };
  }, [runId]);
  return (
    <section aria-label={`Output of ${label}`}>
      <h3>
        Output of {label} <Link href={`/runs/${seg(runId)}`}>(run)</Link>
      </h3>
      <pre class="output" tabIndex={0}>
        {text === null ? 'loading…' : text === '' ? '(no output yet)' : text.slice(-20_000)}
      </pre>
    </section>
  );
}

function ServiceCard({
  s,
  act,
  shown,
  show,
}: {
  s: ServiceJson;
  act: (action: string, instance?: number) => void;
  shown: string | null;
  show: (key: string | null) => void;
}) {
  const name = `${s.app}/${s.service}`;
  const current = s.instance_states.find((i) => `${name}#${i.instance}` === shown);
  const mayRead = may('GET /api/v1/runs/{id}/log', s.app);
  const verbs = {
    start: may('POST /api/v1/services/{app}/{service}/start', s.app),
    restart: may('POST /api/v1/services/{app}/{service}/restart', s.app),
    stop: may('POST /api/v1/services/{app}/{service}/stop', s.app),
  };
  return (
    <section class="card" aria-labelledby={`svc-${s.app}-${s.service}`}>
      <h2 id={`svc-${s.app}-${s.service}`}>
        {name} {s.crash_loop && <span class="badge tone-bad">crash loop</span>}
      </h2>
      <p class="muted">
        <code>{s.argv.join(' ')}</code> · {s.instances} instance{s.instances === 1 ? '' : 's'}
        {s.ready_check ? ` · ready: ${s.ready_check}` : ''}
      </p>
      <ReadOnly app={s.app} />
      {(verbs.start || verbs.restart || verbs.stop) && (
        <div class="actions">
          {verbs.start && (
            <button type="button" onClick={() => act('start')}>
              Start
            </button>
          )}
          {verbs.restart && (
            <ConfirmButton
              label="Restart"
              question={`Restart every instance of ${name}, one at a time?`}
              confirmLabel="Restart"
              onConfirm={() => act('restart')}
            />
          )}
          {verbs.stop && (
            <ConfirmButton
              label="Stop"
              question={`Stop every instance of ${name}? They stay stopped until a start.`}
              confirmLabel="Stop"
              onConfirm={() => act('stop')}
            />
          )}
        </div>
      )}
      <table class="runs stack">
        <thead>
          <tr>
            <th scope="col">Instance</th>
            <th scope="col">State</th>
            <th scope="col">PID</th>
            <th scope="col">Uptime</th>
            <th scope="col">Restarts</th>
            <th scope="col">Last exit</th>
            {mayRead && <th scope="col">Output</th>}
          </tr>
        </thead>
        <tbody>
          {s.instance_states.map((i) => {
            const key = `${name}#${i.instance}`;
            return (
              <tr key={key}>
                <td data-label="Instance">{i.instance}</td>
                <td data-label="State">
                  <span>
                    <span class={`badge tone-${TONE[i.state] ?? 'muted'}`}>{i.state}</span>
                    {i.crash_loop && <span class="err-line">crash loop</span>}
                  </span>
                </td>
                <td data-label="PID">{i.pid ?? '–'}</td>
                <td data-label="Uptime">{uptime(i.uptime_seconds)}</td>
                <td data-label="Restarts">{i.restarts}</td>
                <td data-label="Last exit">
                  {i.last_exit
                    ? `${i.last_exit.outcome}${i.last_exit.error ? `: ${i.last_exit.error}` : ''}`
                    : '–'}
                </td>
                {mayRead && (
                  <td data-label="Output">
                    {i.run_id && (
                      <button
                        type="button"
                        class="link"
                        onClick={() => show(shown === key ? null : key)}
                      >
                        {shown === key ? 'Hide output' : `Output of instance ${i.instance}`}
                      </button>
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      {current?.run_id && mayRead && (
        <Output runId={current.run_id} label={`${name} instance ${current.instance}`} />
      )}
    </section>
  );
}

/** The page. */
export function ServicesPage() {
  const { data, error, reload } = useLoad(
    () => get<{ services: ServiceJson[] }>('/api/v1/services'),
    [],
  );
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  useLive((e) => {
    if (e.type === 'reset' || e.type === 'jobs') reload();
    else if (e.type === 'run' && e.run.trigger === 'service') reload();
  });
  useEffect(() => {
    const t = setInterval(reload, POLL_MS);
    return () => clearInterval(t);
  }, []);
  const act = (s: ServiceJson) => (action: string, instance?: number) => {
    setNotice({ kind: 'ok', text: `${action} ${s.app}/${s.service}…` });
    post<{ results: { instance: number; result: string }[] }>(
      `/api/v1/services/${seg(s.app)}/${seg(s.service)}/${action}`,
      instance === undefined ? {} : { instance },
    )
      .then((r) => {
        setNotice({
          kind: 'ok',
          text: `${s.app}/${s.service}: ${r.results.map((x) => `instance ${x.instance} ${x.result}`).join(', ')}`,
        });
        reload();
      })
      .catch((err: unknown) => setNotice({ kind: 'error', text: errorText(err) }));
  };
  return (
    <main>
      <h1>Services</h1>
      <p class="muted">
        Long-running commands the daemon keeps alive, each instance restarted with backoff when it
        exits.
      </p>
      <Notice notice={notice ?? (error ? { kind: 'error', text: errorText(error) } : null)} />
      {data && data.services.length === 0 && <p>No services in the manifests.</p>}
      {data?.services.map((s) => (
        <ServiceCard
          key={`${s.app}/${s.service}`}
          s={s}
          act={act(s)}
          shown={shown}
          show={setShown}
        />
      ))}
    </main>
  );
}
