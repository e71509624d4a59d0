/**
 * The cronix web UI (SPEC §13): Preact components compiled by esbuild into one
 * hashed bundle that `cronix serve` ships and serves (scripts/build-ui.mjs).
 * Pages: overview, jobs, job, run; login when the daemon has a token.
 */
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import './tables.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { del, get, rememberSession, whenUnauthorized, type SessionState } from './api.js';
import { LOCAL_ZONE } from './format.js';
import { FreezeBanner } from './freeze-banner.js';
import { connectLive, disconnectLive, useLiveStatus } from './live.js';
import { JobPage } from './pages/job.js';
import { JobsPage } from './pages/jobs.js';
import { LoginPage } from './pages/login.js';
import { NotificationsPage } from './pages/notifications.js';
import { DeadLettersPage } from './pages/dead-letters.js';
import { ServicesPage } from './pages/services.js';
import { AuditPage } from './pages/audit.js';
import { OverviewPage } from './pages/overview.js';
import { RunPage } from './pages/run.js';
import { Link, match, navigate, useLocation } from './router.js';

function Header({ session, onLogout }: { session: SessionState; onLogout: () => void }) {
  const live = useLiveStatus();
  const { path } = useLocation();
  const current = (p: string) => (p === '/' ? path === '/' : path.startsWith(p));
  return (
    <header class="top">
      <nav aria-label="Main">
        <span class="brand">cronix</span>
        <a
          href="/"
          aria-current={current('/') ? 'page' : undefined}
          onClick={(e) => (e.preventDefault(), navigate('/'))}
        >
          Overview
        </a>
        <a
          href="/jobs"
          aria-current={current('/jobs') ? 'page' : undefined}
          onClick={(e) => (e.preventDefault(), navigate('/jobs'))}
        >
          Jobs
        </a>
        <a
          href="/services"
          aria-current={current('/services') ? 'page' : undefined}
          onClick={(e) => (e.preventDefault(), navigate('/services'))}
        >
          Services
        </a>
        <a
          href="/notifications"
          aria-current={current('/notifications') ? 'page' : undefined}
          onClick={(e) => (e.preventDefault(), navigate('/notifications'))}
        >
          Notifications
        </a>
        <a
          href="/dead-letters"
          aria-current={current('/dead-letters') ? 'page' : undefined}
          onClick={(e) => (e.preventDefault(), navigate('/dead-letters'))}
        >
          Dead letters
        </a>
        <a
          href="/audit"
          aria-current={current('/audit') ? 'page' : undefined}
          onClick={(e) => (e.preventDefault(), navigate('/audit'))}
        >
          Audit
        </a>
      </nav>
      <div class="status">
        <span class={`live ${live ? 'on' : 'off'}`} role="status">
          {live ? 'Live' : 'Reconnecting…'}
        </span>
        <span class="muted">Your zone: {LOCAL_ZONE}</span>
        {session.who && (
          <span class="who">
            {session.who}{' '}
            <span class="muted">
              ({session.role}
              {session.apps && session.apps.length > 0 ? `: ${session.apps.join(', ')}` : ''})
            </span>
          </span>
        )}
        {session.auth === 'token' && (
          <button type="button" class="link" onClick={onLogout}>
            Log out
          </button>
        )}
      </div>
    </header>
  );
}

function Page() {
  const { path } = useLocation();
  let m: Record<string, string> | null;
  if (path === '/' || path === '/login') return <OverviewPage />;
  if (match('/jobs', path)) return <JobsPage />;
  if ((m = match('/jobs/:app/:job', path))) return <JobPage app={m['app']!} job={m['job']!} />;
  if ((m = match('/runs/:id', path))) return <RunPage id={m['id']!} />;
  if (match('/notifications', path)) return <NotificationsPage />;
  if (match('/dead-letters', path)) return <DeadLettersPage />;
  if (match('/services', path)) return <ServicesPage />;
  if (match('/audit', path)) return <AuditPage />;
  return (
    <main>
      <h1>Not found</h1>
      <p>
        There is no page at {path}. <Link href="/">Go to the overview</Link>.
      </p>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<SessionState | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    whenUnauthorized(() =>
      setSession((s) => s && { ...s, authenticated: false, csrf_token: null }),
    );
    get<SessionState>('/api/v1/session').then(
      (s) => {
        rememberSession(s);
        setSession(s);
      },
      (err: Error) => setError(err.message),
    );
  }, []);
  useEffect(() => {
    if (session?.authenticated) connectLive();
    else disconnectLive(); // the stream needs the session too
  }, [session?.authenticated]);
  if (error) return <p role="alert">The daemon did not answer: {error}</p>;
  if (!session) return <p class="boot">Loading cronix…</p>;
  if (!session.authenticated)
    return (
      <LoginPage
        sso={session.sso === true}
        onLogin={(s) => {
          rememberSession(s);
          setSession(s);
          if (location.pathname === '/login') navigate('/', true);
        }}
      />
    );
  const logout = () =>
    void del<SessionState>('/api/v1/session').finally(() => {
      const s: SessionState = {
        auth: 'token',
        authenticated: false,
        csrf_token: null,
        expires_at: null,
      };
      rememberSession(s);
      setSession(s);
    });
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header session={session} onLogout={logout} />
      <FreezeBanner />
      <div id="main" tabIndex={-1}>
        <Page />
      </div>
    </>
  );
}

render(<App />, document.getElementById('app')!);
