/**
 * Overview (SPEC §13): outcomes over 24 h, completeness per job, what needs
 * attention, what runs now, the fires of the next 24 h, and in HA the leader
 * and replicas (`GET /api/v1/cluster`; the block is hidden when the daemon has
 * no such route, as with the SQLite store).
 */
import { ApiError, apiPaths, get, seg, type Outcome, type RunJson } from '../api.js';
import { OutcomeBars } from '../charts.js';
import { errorText, OutcomeBadge, RunTable, useLoad, useThrottled, When } from '../components.js';
import { inLocal, relative } from '../format.js';
import { useLive } from '../live.js';
import { Link } from '../router.js';

interface Stats {
  since: string;
  until: string;
  hours: { start: string; counts: Partial<Record<Outcome, number>> }[];
  totals: Partial<Record<Outcome, number>>;
  completeness: { app: string; job: string; expected: number; succeeded: number; ratio: number }[];
  completeness_jobs: number;
  attention: {
    app: string;
    job: string;
    reasons: string[];
    last_outcome: Outcome | null;
    missed: number;
  }[];
  attention_total: number;
}

interface Upcoming {
  fires: {
    app: string;
    job: string;
    timezone: string;
    utc: string;
    paused: boolean;
    schedule_index: number;
  }[];
  more: boolean;
}

interface Cluster {
  self: { replica: string; role: string };
  leader: { replica: string; epoch: number; lease_expires_at: string } | null;
  replicas: { replica: string; last_seen: string }[];
}

const REASON: Record<string, string> = {
  last_failed: 'last run failed',
  missed: 'missed in 24 h',
  paused: 'paused',
};

/** Each job's zone, learnt once per job from its detail (runs do not carry it). */
const zoneOf = new Map<string, string>();
async function learnZones(runs: RunJson[]): Promise<void> {
  // a service's start (trigger service) has no job to ask: its times are shown in UTC
  const keys = [
    ...new Set(runs.filter((r) => r.trigger !== 'service').map((r) => `${r.app}/${r.job}`)),
  ].filter((k) => !zoneOf.has(k));
  await Promise.all(
    keys.slice(0, 20).map(async (key) => {
      const [app, ...job] = key.split('/');
      const d = await get<{ timezone: string }>(
        `/api/v1/jobs/${seg(app!)}/${seg(job.join('/'))}`,
      ).catch(() => ({ timezone: 'UTC' }));
      zoneOf.set(key, d.timezone);
    }),
  );
}

const jobHref = (app: string, job: string) =>
  `/jobs/${encodeURIComponent(app)}/${encodeURIComponent(job)}`;

function ClusterBlock() {
  const cluster = useLoad(async () => {
    if (!(await apiPaths()).has('/api/v1/cluster')) return null; // no HA store
    try {
      return await get<Cluster>('/api/v1/cluster');
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }, []);
  if (!cluster.data) return null;
  const c = cluster.data;
  return (
    <section aria-labelledby="cluster-h">
      <h2 id="cluster-h">Cluster</h2>
      <p>
        Leader: {c.leader ? <strong>{c.leader.replica}</strong> : <strong>none</strong>}
        {c.leader &&
          ` (epoch ${c.leader.epoch}, lease until ${inLocal(c.leader.lease_expires_at)})`}
        . This page is served by {c.self.replica} ({c.self.role}).
      </p>
      <ul>
        {c.replicas.map((r) => (
          <li key={r.replica}>
            {r.replica} — last seen {relative(r.last_seen)}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function OverviewPage() {
  const stats = useLoad(() => get<Stats>('/api/v1/stats?hours=24&limit=10'), []);
  const running = useLoad(async () => {
    const r = await get<{ runs: RunJson[] }>('/api/v1/runs?phase=running&limit=50');
    await learnZones(r.runs);
    return r;
  }, []);
  const upcoming = useLoad(() => get<Upcoming>('/api/v1/upcoming?hours=24&limit=10'), []);
  const zones = new Map((upcoming.data?.fires ?? []).map((f) => [`${f.app}/${f.job}`, f.timezone]));
  // a busy daemon sends many events: reload each view at most every 2 s (stats) / 0.5 s
  const reloadStats = useThrottled(stats.reload, 2_000);
  const reloadRunning = useThrottled(running.reload, 500);
  const reloadUpcoming = useThrottled(upcoming.reload, 2_000);
  useLive((e) => {
    if (e.type === 'run') {
      if (e.change !== 'recorded') reloadRunning();
      if (e.change === 'ended') reloadStats();
    } else {
      reloadStats();
      reloadRunning();
      reloadUpcoming();
    }
  });
  const s = stats.data;
  return (
    <main>
      <h1>Overview</h1>
      {[stats, running, upcoming].some((l) => l.error !== null) && (
        <p class="notice notice-error" role="alert">
          Could not load everything: {errorText(stats.error ?? running.error ?? upcoming.error)}
        </p>
      )}
      <div class="grid">
        <section aria-labelledby="outcomes-h" class="wide">
          <h2 id="outcomes-h">Outcomes over 24 h</h2>
          {s ? <OutcomeBars hours={s.hours} totals={s.totals} /> : <p class="muted">Loading…</p>}
        </section>
        <section aria-labelledby="attention-h">
          <h2 id="attention-h">Needs attention</h2>
          {s && s.attention.length === 0 && (
            <p>Nothing: no failed last run, no missed fire, no paused job.</p>
          )}
          <ul class="plain">
            {s?.attention.map((a) => (
              <li key={`${a.app}/${a.job}`}>
                <Link href={jobHref(a.app, a.job)}>{`${a.app}/${a.job}`}</Link> —{' '}
                {a.reasons
                  .map((r) =>
                    r === 'missed'
                      ? `${a.missed} ${a.missed === 1 ? 'fire' : 'fires'} ${REASON[r]}`
                      : REASON[r],
                  )
                  .join(', ')}
                {a.last_outcome && a.reasons.includes('last_failed') && (
                  <>
                    {' '}
                    <OutcomeBadge outcome={a.last_outcome} />
                  </>
                )}
              </li>
            ))}
          </ul>
          {s && s.attention_total > s.attention.length && (
            <p class="muted">
              and {s.attention_total - s.attention.length} more (
              <Link href="/jobs?state=failing">failing jobs</Link>,{' '}
              <Link href="/jobs?state=paused">paused jobs</Link>)
            </p>
          )}
        </section>
        <section aria-labelledby="complete-h">
          <h2 id="complete-h">Completeness per job (24 h)</h2>
          <p class="muted">Succeeded scheduled runs ÷ scheduled fires; lowest first.</p>
          {s && s.completeness.length === 0 && <p>No scheduled runs ended in the last 24 h.</p>}
          <table class="compact stack" hidden={!s || s.completeness.length === 0}>
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Completeness</th>
                <th scope="col">Succeeded</th>
              </tr>
            </thead>
            <tbody>
              {s?.completeness.map((c) => (
                <tr key={`${c.app}/${c.job}`}>
                  <td data-label="Job">
                    <Link href={jobHref(c.app, c.job)}>{`${c.app}/${c.job}`}</Link>
                  </td>
                  <td data-label="Completeness">
                    <meter
                      min={0}
                      max={1}
                      low={0.9}
                      high={0.99}
                      optimum={1}
                      value={c.ratio}
                      aria-hidden="true"
                    />{' '}
                    {(c.ratio * 100).toFixed(c.ratio === 1 ? 0 : 1)}%
                  </td>
                  <td data-label="Succeeded" class="num">
                    {c.succeeded} of {c.expected}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {s && s.completeness_jobs > s.completeness.length && (
            <p class="muted">
              {s.completeness_jobs - s.completeness.length} more jobs, all at or above the last
              shown.
            </p>
          )}
        </section>
        <section aria-labelledby="running-h" class="wide">
          <h2 id="running-h">Running now</h2>
          <RunTable
            runs={running.data?.runs ?? []}
            zoneOf={(r) =>
              zoneOf.get(`${r.app}/${r.job}`) ?? zones.get(`${r.app}/${r.job}`) ?? 'UTC'
            }
            caption="Runs in progress"
            empty="Nothing is running."
          />
        </section>
        <section aria-labelledby="next-h" class="wide">
          <h2 id="next-h">Next 24 h</h2>
          <table class="compact stack">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Fires at (job zone · your time)</th>
                <th scope="col">In</th>
              </tr>
            </thead>
            <tbody>
              {upcoming.data?.fires.length === 0 && (
                <tr>
                  <td colSpan={3}>No fires in the next 24 hours.</td>
                </tr>
              )}
              {upcoming.data?.fires.map((f) => (
                <tr key={`${f.app}/${f.job}/${f.schedule_index}/${f.utc}`}>
                  <td data-label="Job">
                    <span>
                      <Link href={jobHref(f.app, f.job)}>{`${f.app}/${f.job}`}</Link>
                      {f.paused && <span class="badge tone-warn">paused</span>}
                    </span>
                  </td>
                  <td data-label="Fires at">
                    <When iso={f.utc} zone={f.timezone} />
                  </td>
                  <td data-label="In">{relative(f.utc)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {upcoming.data?.more && (
            <p class="muted">More fires follow within 24 h; each job’s page lists its own.</p>
          )}
        </section>
        <ClusterBlock />
      </div>
    </main>
  );
}
