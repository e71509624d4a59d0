/**
 * Login: the API token, once, for an HttpOnly session cookie (SPEC §13). The page says where
 * the token is before anyone has to guess: a new user has never seen it.
 */
import { useState } from 'preact/hooks';
import { ApiError, post, type SessionState } from '../api.js';

export function LoginPage({
  onLogin,
  sso = false,
}: {
  onLogin: (s: SessionState) => void;
  /** Single sign-on is configured (SPEC §18): offered above the token. */
  sso?: boolean;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('token') as HTMLInputElement;
    setBusy(true);
    setError(null);
    try {
      const s = await post<SessionState>('/api/v1/session', { token: input.value });
      input.value = '';
      onLogin(s);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'That token is not right: copy it again from the token file (see below).'
          : (err as Error).message,
      );
      input.select();
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>cronix</h1>
      {sso && (
        <p class="sso">
          <a class="button" href="/api/v1/sso/login">
            Sign in with SSO
          </a>
        </p>
      )}
      <form onSubmit={submit}>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          required
          autoFocus
          aria-describedby="token-help"
        />
        <div id="token-help" class="muted help">
          <p>
            The daemon keeps it in <code>&lt;data-dir&gt;/token</code>. With the default data dir,
            print it from the directory where <code>cronix serve</code> runs:
          </p>
          <pre>cat .cronix/token</pre>
          <p>
            If the daemon was started with <code>--token-file</code>, it is in that file. Given
            once; this browser then holds a session cookie for 12 hours.
          </p>
        </div>
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {error && (
          <p class="notice notice-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
