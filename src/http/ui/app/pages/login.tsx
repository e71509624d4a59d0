/** Login: the API token, once, for an HttpOnly session cookie (SPEC §13). */
import { useState } from 'preact/hooks';
import { ApiError, post, type SessionState } from '../api.js';

export function LoginPage({ onLogin }: { onLogin: (s: SessionState) => void }) {
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
          ? 'That token is not right. It is in the token file of the daemon’s data dir (.cronix/token by default).'
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
        <p id="token-help" class="muted">
          Given once; this browser then holds a session cookie for 12 hours.
        </p>
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
