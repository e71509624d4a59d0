/**
 * Jobs (SPEC §13): every job with its schedule in words, zone, next fire,
 * paused state, the strip of its last 20 outcomes, active and queued counts;
 * filtered by name, app and state in memory, and virtualised (only the rows in
 * view are in the DOM), so 10,000 jobs stay responsive.
 *
 * Nothing is cut: names and words wrap. Each row has a slot of a fixed height
 * for the virtualisation (taller on a phone, where a row is a block of job,
 * words, next fire and last outcome: styles.css); a row that needs more room
 * grows, and the overscan covers the difference.
 */
import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { describeSchedule } from '../../../../contract/schedule/describe.js';
import { get, seg, type JobJson } from '../api.js';
import { errorText, OutcomeBadge, OutcomeStrip, When } from '../components.js';
import { outcomeTone } from '../format.js';
import { useLive, type LiveEvent } from '../live.js';
import { jobPath, Link, navigate, useLocation } from '../router.js';

interface Row extends JobJson {
  key: string;
  words: string;
}

/** Below this width the table is a list of blocks (tables.css has the same number). */
const NARROW = '(max-width: 900px)';
/** A row's slot: a table row's height (it grows if it must); a block's typical height. */
const ROW_HEIGHT = { wide: 60, narrow: 112 };
const OVERSCAN = 8;

/** Whether the page is narrower than {@link NARROW}, following changes. */
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const m = matchMedia(NARROW);
    const f = () => setNarrow(m.matches);
    m.addEventListener('change', f);
    return () => m.removeEventListener('change', f);
  }, []);
  return narrow;
}

/** A zone that may break after each `/` (`America/<wbr>Argentina/<wbr>Buenos_Aires`). */
function Zone({ zone }: { zone: string }) {
  const parts = zone.split('/');
  return (
    <>
      {parts.map((p, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {i > 0 ? `/${p}` : p}
        </Fragment>
      ))}
    </>
  );
}
const STATES = ['all', 'failing', 'paused', 'running', 'queued', 'ok', 'never ran', 'disabled'];

function stateOf(r: Row, state: string): boolean {
  switch (state) {
    case 'failing':
      return outcomeTone(r.last_outcome) === 'bad';
    case 'paused':
      return r.paused;
    case 'running':
      return r.active > 0;
    case 'queued':
      return r.queued > 0;
    case 'ok':
      return r.last_outcome === 'success';
    case 'never ran':
      return r.last_outcome === null;
    case 'disabled':
      return !r.enabled;
    default:
      return true;
  }
}

function toRow(j: JobJson): Row {
  return {
    ...j,
    key: `${j.app}/${j.job}`,
    words: j.schedules.map((s) => describeSchedule(s, j.timezone)).join('; '),
  };
}

/** Applies one live event to the rows; returns the same array when nothing changed. */
function apply(rows: Row[], index: Map<string, number>, e: LiveEvent): Row[] {
  if (e.type !== 'run' && e.type !== 'job') return rows;
  const key = e.type === 'run' ? `${e.run.app}/${e.run.job}` : `${e.app}/${e.job}`;
  const i = index.get(key);
  if (i === undefined) return rows;
  const r = { ...rows[i]! };
  if (e.type === 'job') r.paused = e.paused;
  else if (e.change === 'ended' && e.run.outcome) {
    r.last_outcome = e.run.outcome;
    r.recent_outcomes = [e.run.outcome, ...r.recent_outcomes].slice(0, 20);
  }
  const next = rows.slice();
  next[i] = r;
  return next;
}

/** The first rows at once (one small page), then every job for filtering in memory. */
const FIRST_PAGE = 100;
function useJobs() {
  const [data, setData] = useState<{ rows: Row[]; total: number; complete: boolean } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const page = (r: { jobs: JobJson[]; total: number }) => ({
      rows: r.jobs.map(toRow),
      total: r.total,
      complete: r.jobs.length === r.total,
    });
    void (async () => {
      try {
        if (tick === 0) {
          const head = page(
            await get<{ jobs: JobJson[]; total: number }>(`/api/v1/jobs?limit=${FIRST_PAGE}`),
          );
          if (!live) return;
          setData(head);
          if (head.complete) return;
        }
        const all = page(await get<{ jobs: JobJson[]; total: number }>('/api/v1/jobs'));
        if (live) setData(all);
      } catch (err) {
        if (live) setError(err);
      }
    })();
    return () => {
      live = false;
    };
  }, [tick]);
  return {
    data,
    error,
    reload: () => setTick((t) => t + 1),
    set: (f: (rows: Row[]) => Row[]) => setData((d) => (d ? { ...d, rows: f(d.rows) } : d)),
  };
}

export function JobsPage() {
  const { query } = useLocation();
  const [text, setText] = useState(query.get('q') ?? '');
  const [app, setApp] = useState(query.get('app') ?? '');
  const [state, setState] = useState(query.get('state') ?? 'all');
  const load = useJobs();
  const rows = load.data?.rows ?? null;
  const index = useMemo(() => new Map((rows ?? []).map((r, i) => [r.key, i])), [rows]);
  const pending = useRef<LiveEvent[]>([]);
  const visible = useRef(new Set<string>());
  useLive((e) => {
    if (e.type === 'jobs' || e.type === 'reset') return load.reload();
    pending.current.push(e);
    if (pending.current.length === 1)
      requestAnimationFrame(() => {
        const batch = pending.current;
        pending.current = [];
        load.set((rs) => batch.reduce((acc, ev) => apply(acc, index, ev), rs));
        // active and queued counts: re-read the rows in view that changed
        const keys = new Set(
          batch.flatMap((ev) => (ev.type === 'run' ? [`${ev.run.app}/${ev.run.job}`] : [])),
        );
        for (const key of [...keys].filter((k) => visible.current.has(k)).slice(0, 30)) {
          const [a, ...j] = key.split('/');
          void get<JobJson>(`/api/v1/jobs/${seg(a!)}/${seg(j.join('/'))}`).then(
            (d) =>
              load.set((rs) => {
                const i = index.get(key);
                if (i === undefined) return rs;
                const next = rs.slice();
                next[i] = { ...rs[i]!, active: d.active, queued: d.queued, paused: d.paused };
                return next;
              }),
            () => undefined,
          );
        }
      });
  });
  const apps = useMemo(() => [...new Set((rows ?? []).map((r) => r.app))].sort(), [rows]);
  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return (rows ?? []).filter(
      (r) =>
        (app === '' || r.app === app) &&
        stateOf(r, state) &&
        (needle === '' || r.key.toLowerCase().includes(needle)),
    );
  }, [rows, text, app, state]);
  useEffect(() => {
    const q = new URLSearchParams();
    if (text) q.set('q', text);
    if (app) q.set('app', app);
    if (state !== 'all') q.set('state', state);
    const s = q.toString();
    history.replaceState(null, '', s ? `/jobs?${s}` : '/jobs');
  }, [text, app, state]);

  const scroller = useRef<HTMLDivElement>(null);
  const narrow = useNarrow();
  const ROW = ROW_HEIGHT[narrow ? 'narrow' : 'wide'];
  const [scroll, setScroll] = useState({ top: 0, height: 800 });
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    // the box is as tall as its rows, up to the window: count on the window's height, or a box
    // that starts small (few rows drawn) would never draw the rows that make it grow
    const update = () =>
      setScroll({ top: el.scrollTop, height: Math.max(el.clientHeight, window.innerHeight) });
    update();
    el.addEventListener('scroll', update, { passive: true });
    window.addEventListener('resize', update);
    return () => {
      el.removeEventListener('scroll', update);
      window.removeEventListener('resize', update);
    };
  }, [rows !== null]);
  const first = Math.max(0, Math.floor(scroll.top / ROW) - OVERSCAN);
  const last = Math.min(shown.length, Math.ceil((scroll.top + scroll.height) / ROW) + OVERSCAN);
  visible.current = new Set(shown.slice(first, last).map((r) => r.key));

  return (
    <main>
      <h1>Jobs</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name
          <input
            type="search"
            value={text}
            placeholder="app/job contains…"
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          App
          <select value={app} onChange={(e) => setApp((e.target as HTMLSelectElement).value)}>
            <option value="">all apps</option>
            {apps.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          State
          <select value={state} onChange={(e) => setState((e.target as HTMLSelectElement).value)}>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <span class="count" role="status" aria-live="polite">
          {rows === null
            ? 'Loading…'
            : `${shown.length.toLocaleString('en')} of ${rows.length.toLocaleString('en')} jobs`}
        </span>
      </form>
      {load.error !== null && (
        <p class="notice notice-error" role="alert">
          Could not load the jobs: {errorText(load.error)}
        </p>
      )}
      <div class="scroller" ref={scroller} tabIndex={0} aria-label="Jobs table, scrollable">
        <table class="jobs" aria-rowcount={shown.length + 1}>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Schedule</th>
              <th scope="col">Zone</th>
              <th scope="col">Next fire</th>
              <th scope="col">State</th>
              <th scope="col">Last outcome</th>
              <th scope="col">Last 20 runs</th>
              <th scope="col">Active</th>
              <th scope="col">Queued</th>
            </tr>
          </thead>
          <tbody>
            {first > 0 && (
              <tr class="spacer" style={{ height: `${first * ROW}px` }} aria-hidden="true" />
            )}
            {shown.slice(first, last).map((r, i) => (
              <tr
                key={r.key}
                aria-rowindex={first + i + 2}
                style={narrow ? undefined : { height: `${ROW}px` }}
              >
                <td class="name">
                  <Link href={jobPath(r.app, r.job)}>{r.key}</Link>
                </td>
                <td class="words" title={r.schedules.join('; ')}>
                  {r.words}
                </td>
                <td class="zone">
                  <Zone zone={r.timezone} />
                </td>
                <td class="next" data-label="Next fire">
                  <When iso={r.next_fire} zone={r.timezone} />
                </td>
                <td class={`state ${!r.enabled ? 'off' : r.paused ? 'held' : 'on'}`}>
                  {!r.enabled ? (
                    'disabled'
                  ) : r.paused ? (
                    <strong class="paused">paused</strong>
                  ) : r.fired_by === 'host' ? (
                    <span class="watched" title="fired by host schedulers; this daemon expects it">
                      {`watched · ${r.last_report ? `last report from ${r.last_report.host}` : 'no report yet'}`}
                    </span>
                  ) : (
                    'active'
                  )}
                </td>
                <td class="outcome">
                  <OutcomeBadge outcome={r.last_outcome} />
                </td>
                <td class="strip-cell">
                  <OutcomeStrip outcomes={r.recent_outcomes} />
                </td>
                <td class="num">{r.active}</td>
                <td class="num">{r.queued}</td>
              </tr>
            ))}
            {last < shown.length && (
              <tr
                class="spacer"
                style={{ height: `${(shown.length - last) * ROW}px` }}
                aria-hidden="true"
              />
            )}
            {rows !== null && shown.length === 0 && (
              <tr>
                <td colSpan={9} class="muted">
                  No job matches.{' '}
                  <button
                    type="button"
                    class="link"
                    onClick={() => (
                      setText(''),
                      setApp(''),
                      setState('all'),
                      navigate('/jobs', true)
                    )}
                  >
                    Clear the filters
                  </button>
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </main>
  );
}
