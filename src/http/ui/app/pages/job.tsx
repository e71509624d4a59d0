/**
 * Job (SPEC §13): schedule and policy, the next 10 fires with DST transitions
 * marked, run history with an outcome filter, a timeline, a duration chart,
 * the calendar (blackout windows, skipped fires), and the actions `Run now`, a delayed run,
 * `Pause` / `Resume`, `Skip next` (shown to a session that may use them, `access.ts`).
 */
import { useRef, useState } from 'preact/hooks';
import { describeSchedule, joinWords } from '../../../../contract/schedule/describe.js';
import {
  get,
  post,
  seg,
  type Admission,
  type BlackoutJson,
  type JobDetailJson,
  type NotifyEntryJson,
  type Outcome,
  type RunJson,
} from '../api.js';
import { mayChange } from '../access.js';
import { DurationChart, Timeline } from '../charts.js';
import { ConfirmButton, errorText, Notice, ReadOnly, RunTable, useLoad } from '../components.js';
import { inLocal, inZone, LOCAL_ZONE, OUTCOME_TEXT } from '../format.js';
import { useLive } from '../live.js';
import { Link } from '../router.js';
import { BackfillPanel } from './backfill-panel.js';

interface NextFires {
  timezone: string;
  fires: {
    utc: string;
    local: string;
    schedule_indexes: number[];
    transition: { at: string; before: string; after: string; direction: 'forward' | 'back' } | null;
  }[];
}

type NoticeState = { kind: 'ok' | 'error'; text: preact.ComponentChildren } | null;

function admissionText(a: Admission, zone: string): preact.ComponentChildren {
  const link = <Link href={`/runs/${a.run.id}`}>run {a.run.id.slice(-12)}</Link>;
  switch (a.admission) {
    case 'started':
      return <>Started {link}.</>;
    case 'queued':
      return <>Queued {link} behind the running ones.</>;
    case 'scheduled':
      return (
        <>
          Scheduled {link} for {inZone(a.run.due_at ?? a.run.scheduled_time, zone)}.
        </>
      );
    case 'skipped':
      return <>Not started: the job is at its limit and its policy is Forbid ({link}, skipped).</>;
    case 'queue_full':
      return <>Not started: the queue is full ({link}).</>;
  }
}

/** A blackout window in words. */
function windowText(w: BlackoutJson): preact.ComponentChildren {
  if ('cron' in w)
    return (
      <>
        <code>{w.cron}</code> for {w.duration_seconds} s
      </>
    );
  if ('from' in w) return `${inLocal(w.from)} to ${inLocal(w.to)}`;
  return (
    <>
      the dates in <code>{w.dates_file}</code>
    </>
  );
}

function Policy({ job }: { job: JobDetailJson }) {
  const p = job.policy as {
    concurrency: string;
    concurrency_scope: string;
    timeout_seconds: number;
    max_concurrent: number;
    queue_max: number;
    retries: { max_attempts: number; min_seconds: number; max_seconds: number };
    catchup: { mode: string; window_seconds: number | null; max_runs: number };
    jitter: { stable_seconds: number; random_seconds: number };
  };
  return (
    <dl class="facts">
      <dt>Concurrency</dt>
      <dd>
        {p.concurrency} ({p.concurrency_scope} scope)
        {p.concurrency !== 'Allow' && `, at most ${p.max_concurrent} at once`}
        {p.concurrency === 'Enqueue' && `, queue up to ${p.queue_max}`}
      </dd>
      <dt>Timeout</dt>
      <dd>{p.timeout_seconds} s per attempt</dd>
      <dt>Retries</dt>
      <dd>
        {p.retries.max_attempts} attempts, backoff {p.retries.min_seconds}–{p.retries.max_seconds} s
      </dd>
      <dt>Catch-up</dt>
      <dd>
        {p.catchup.mode}
        {p.catchup.window_seconds !== null &&
          p.catchup.window_seconds !== undefined &&
          `, within ${p.catchup.window_seconds} s`}
        {p.catchup.mode === 'all' && `, at most ${p.catchup.max_runs} runs`}
      </dd>
      <dt>Jitter</dt>
      <dd>
        {p.jitter.stable_seconds} s stable, {p.jitter.random_seconds} s random
      </dd>
      {job.blackout && job.blackout.length > 0 && (
        <>
          <dt>Blackout</dt>
          <dd>
            <ul class="plain blackout">
              {job.blackout.map((w, i) => (
                <li key={i}>{windowText(w)}</li>
              ))}
            </ul>
          </dd>
        </>
      )}
      {job.request && (
        <>
          <dt>Request</dt>
          <dd>
            <code>
              {job.request.method} {job.request.url}
            </code>
            {job.signed ? ' (signed)' : ' (not signed)'}
            {Object.keys(job.request.headers).length > 0 && (
              <ul class="plain">
                {Object.entries(job.request.headers).map(([k, v]) => (
                  <li key={k}>
                    <code>
                      {k}: {v}
                    </code>
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </>
      )}
      <dt>Notify</dt>
      <dd>
        <NotifyWords entries={job.notify ?? []} />
      </dd>
      {job.command && (
        <>
          <dt>Command</dt>
          <dd>
            <code>{job.command.argv.join(' ')}</code>
            {job.command.env.length + job.command.env_from_secrets.length > 0 && (
              <p class="muted">
                Environment: {[...job.command.env, ...job.command.env_from_secrets].join(', ')}
                {job.command.env_from_secrets.length > 0 && ' (secret values are never shown)'}
              </p>
            )}
          </dd>
        </>
      )}
    </dl>
  );
}

/** "chat (webhook) on failed and slow; slow after 120 s; repeats at most every 900 s". */
function NotifyWords({ entries }: { entries: NotifyEntryJson[] }) {
  if (entries.length === 0) return <>none (no notifier hears of this job)</>;
  return (
    <ul class="plain">
      {entries.map((n) => (
        <li key={n.to}>
          <strong>{n.to}</strong> ({n.type}) on {joinWords(n.on)}
          {n.on.includes('slow') && `; slow after ${n.slow_after_seconds} s`}
          {(n.on.includes('failed') || n.on.includes('missed')) &&
            `; repeats at most every ${n.repeat_every_seconds} s`}
        </li>
      ))}
    </ul>
  );
}

function NextFiresTable({ next }: { next: NextFires }) {
  const local = next.timezone !== LOCAL_ZONE;
  return (
    <table class="compact next-fires stack">
      <caption>Next {next.fires.length} fires</caption>
      <thead>
        <tr>
          <th scope="col">In {next.timezone}</th>
          {local && <th scope="col">Your time ({LOCAL_ZONE})</th>}
        </tr>
      </thead>
      <tbody>
        {next.fires.flatMap((f) => [
          ...(f.transition
            ? [
                <tr key={`dst-${f.utc}`} class="dst">
                  <td colSpan={local ? 2 : 1}>
                    <strong>DST:</strong> clocks go {f.transition.direction} at{' '}
                    {inZone(f.transition.at, 'UTC')}{' '}
                    {`(UTC${f.transition.before} → UTC${f.transition.after})`}
                  </td>
                </tr>,
              ]
            : []),
          <tr key={f.utc}>
            <td data-label={`In ${next.timezone}`}>
              <time dateTime={f.utc} title={inZone(f.utc, 'UTC')}>
                {inZone(f.utc, next.timezone)}
              </time>
            </td>
            {local && (
              <td data-label="Your time">
                <time dateTime={f.utc}>{inZone(f.utc, LOCAL_ZONE)}</time>
              </td>
            )}
          </tr>,
        ])}
      </tbody>
    </table>
  );
}

const PHASE_RANK = { planned: 0, queued: 1, running: 2, ended: 3 } as const;

/**
 * The later of two views of one run (a run only moves forward: planned → queued → running →
 * ended). A `Run now` answer (`planned`) can arrive after the stream's `ended` of the same run.
 */
function newer(a: RunJson | undefined, b: RunJson): RunJson {
  if (!a) return b;
  if (PHASE_RANK[a.phase] !== PHASE_RANK[b.phase])
    return PHASE_RANK[a.phase] > PHASE_RANK[b.phase] ? a : b;
  return a.attempts > b.attempts ? a : b;
}

export function JobPage({ app, job }: { app: string; job: string }) {
  const base = `/api/v1/jobs/${seg(app)}/${seg(job)}`;
  const [outcome, setOutcome] = useState<Outcome | ''>('');
  const [notice, setNotice] = useState<NoticeState>(null);
  const [delay, setDelay] = useState('5');
  const detail = useLoad(() => get<JobDetailJson>(base), [base]);
  const next = useLoad(() => get<NextFires>(`${base}/next?count=10`), [base]);
  // a list fetched while a live event was on its way must not put a run back to an older phase
  const seen = useRef(new Map<string, RunJson>()).current;
  const fresh = (rs: RunJson[]) => rs.map((r) => newer(seen.get(r.id), r));
  const runs = useLoad(
    () =>
      get<{ runs: RunJson[] }>(
        `/api/v1/runs?app=${seg(app)}&job=${seg(job)}&limit=100${outcome ? `&outcome=${outcome}` : ''}`,
      ).then((r) => fresh(r.runs)),
    [app, job, outcome],
  );
  const all = useLoad(
    () =>
      get<{ runs: RunJson[] }>(`/api/v1/runs?app=${seg(app)}&job=${seg(job)}&limit=100`).then((r) =>
        fresh(r.runs),
      ),
    [app, job],
  );
  useLive((e) => {
    if (e.type === 'reset' || e.type === 'jobs')
      return (detail.reload(), runs.reload(), all.reload());
    if (e.type === 'job' && e.app === app && e.job === job) return detail.reload();
    if (e.type !== 'run' || e.run.app !== app || e.run.job !== job) return;
    seen.set(e.run.id, newer(seen.get(e.run.id), e.run));
    const upsert = (rs: RunJson[]) => {
      const i = rs.findIndex((r) => r.id === e.run.id);
      if (i >= 0) return rs.map((r) => (r.id === e.run.id ? newer(r, e.run) : r));
      return [e.run, ...rs];
    };
    all.set(upsert);
    if (!outcome || e.run.outcome === outcome) runs.set(upsert);
    detail.reload();
  });
  const act = async (what: string, f: () => Promise<unknown>) => {
    setNotice({ kind: 'ok', text: `${what}…` });
    try {
      await f();
    } catch (err) {
      setNotice({ kind: 'error', text: `${what} failed: ${errorText(err)}` });
    }
  };
  const trigger = (body?: unknown) =>
    act(body ? 'Run later' : 'Run now', async () => {
      const a = await post<Admission>(`${base}/trigger`, body);
      setNotice({
        kind: a.admission === 'skipped' || a.admission === 'queue_full' ? 'error' : 'ok',
        text: admissionText(a, detail.data?.timezone ?? 'UTC'),
      });
      const known = newer(seen.get(a.run.id), a.run);
      all.set((rs) => (rs.some((r) => r.id === a.run.id) ? rs : [known, ...rs]));
      runs.reload();
    });
  const setPaused = (paused: boolean) =>
    act(paused ? 'Pause' : 'Resume', async () => {
      await post(`${base}/${paused ? 'pause' : 'resume'}`);
      detail.set((d) => ({ ...d, paused }));
      setNotice({
        kind: 'ok',
        text: paused ? 'Paused: scheduled fires are not run until you resume.' : 'Resumed.',
      });
    });
  const skipNext = () =>
    act('Skip next', async () => {
      const r = await post<{ skip: { at: string }; created: boolean }>(`${base}/skip`, {
        next: true,
      });
      detail.reload();
      setNotice({
        kind: 'ok',
        text: `The fire of ${inZone(r.skip.at, detail.data?.timezone ?? 'UTC')} will be recorded skipped${r.created ? '' : ' (it already was)'}.`,
      });
    });
  const d = detail.data;
  return (
    <main>
      <p class="crumbs">
        <Link href="/jobs">Jobs</Link> / {app}
      </p>
      <h1>
        {app}/{job} {d?.paused && <span class="badge tone-warn">paused</span>}
        {d && !d.enabled && <span class="badge tone-muted">disabled</span>}
      </h1>
      {d?.paused && d.pause_note?.by && (
        <p class="notice pause-note" role="status">
          Paused by {d.pause_note.by}
          {d.pause_note.since ? ` since ${inLocal(d.pause_note.since)}` : ''}
          {d.pause_note.reason ? `: ${d.pause_note.reason}` : ''}
        </p>
      )}
      {d?.skips && d.skips.length > 0 && (
        <ul class="notice plain skips" role="status" aria-label="Skipped fires">
          {d.skips.map((s) => (
            <li key={s.at}>
              The fire of {inZone(s.at, d.timezone)} will be skipped (by {s.by}).
            </li>
          ))}
        </ul>
      )}
      {detail.error !== null && (
        <p class="notice notice-error" role="alert">
          {errorText(detail.error)}
        </p>
      )}
      {d && (
        <>
          <ul class="plain schedules">
            {d.schedules.map((s) => (
              <li key={s}>
                <strong>{describeSchedule(s, d.timezone)}</strong> <code>{s}</code>
              </li>
            ))}
          </ul>
          <ReadOnly app={app} />
          {mayChange(app) && (
            <div class="toolbar">
              <button type="button" class="primary" onClick={() => void trigger()}>
                Run now
              </button>
              <form
                class="inline"
                onSubmit={(e) => {
                  e.preventDefault();
                  void trigger({ after_seconds: Math.round(Number(delay) * 60) });
                }}
              >
                <label>
                  Delay (minutes){' '}
                  <input
                    type="number"
                    min="0"
                    max="527040"
                    step="any"
                    required
                    value={delay}
                    onInput={(e) => setDelay((e.target as HTMLInputElement).value)}
                  />
                </label>
                <button type="submit">Run later</button>
              </form>
              {d.paused ? (
                <button type="button" onClick={() => void setPaused(false)}>
                  Resume
                </button>
              ) : (
                <ConfirmButton
                  label="Pause"
                  question={`Pause ${app}/${job}? Its scheduled fires are not run (nor caught up) until you resume it; manual runs still work.`}
                  confirmLabel="Pause the job"
                  onConfirm={() => void setPaused(true)}
                />
              )}
              {d.enabled && d.next_fire !== null && (
                <ConfirmButton
                  label="Skip next"
                  question={`Skip the next fire of ${app}/${job} (${inZone(d.next_fire, d.timezone)})? It is recorded skipped when it comes; later fires run as usual.`}
                  confirmLabel="Skip it"
                  onConfirm={() => void skipNext()}
                />
              )}
            </div>
          )}
          <Notice notice={notice} />
          <div class="grid">
            <section aria-labelledby="policy-h">
              <h2 id="policy-h">Policy</h2>
              <Policy job={d} />
              <p>
                Active: {d.active} · Queued: {d.queued}
              </p>
            </section>
            <section aria-labelledby="next-h">
              <h2 id="next-h">Next fires</h2>
              {next.data ? <NextFiresTable next={next.data} /> : <p class="muted">Loading…</p>}
            </section>
          </div>
        </>
      )}
      {d && <BackfillPanel app={app} job={job} zone={d.timezone} />}
      <section aria-labelledby="timeline-h">
        <h2 id="timeline-h">Timeline</h2>
        {all.data && <Timeline runs={all.data} zone={d?.timezone ?? 'UTC'} />}
      </section>
      <section aria-labelledby="durations-h">
        <h2 id="durations-h">Durations</h2>
        {all.data && <DurationChart runs={all.data} />}
      </section>
      <section aria-labelledby="history-h">
        <h2 id="history-h">Run history</h2>
        <label>
          Outcome{' '}
          <select
            value={outcome}
            onChange={(e) => setOutcome((e.target as HTMLSelectElement).value as Outcome | '')}
          >
            <option value="">all outcomes</option>
            {(Object.keys(OUTCOME_TEXT) as Outcome[]).map((o) => (
              <option key={o} value={o}>
                {OUTCOME_TEXT[o]}
              </option>
            ))}
          </select>
        </label>
        <RunTable
          runs={runs.data ?? []}
          zoneOf={() => d?.timezone ?? 'UTC'}
          caption={`Runs of ${app}/${job}, newest first${outcome ? `, outcome ${OUTCOME_TEXT[outcome]}` : ''}`}
          empty={runs.data ? 'No runs.' : 'Loading…'}
        />
      </section>
    </main>
  );
}
