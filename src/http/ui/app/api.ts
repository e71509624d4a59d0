/**
 * The UI's API client: JSON in and out, errors in the API's shape
 * (`{"error": {"code", "message"}}`) as {@link ApiError}, and the session's
 * CSRF token on every mutation. The session cookie itself is HttpOnly: this
 * code never sees it.
 */
import { rememberAccess } from './access.js';

/** An error answered by the API (or the network). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The session as `GET /api/v1/session` describes it. */
export interface SessionState {
  auth: 'token' | 'none';
  authenticated: boolean;
  csrf_token: string | null;
  expires_at: string | null;
  /** The token name or SSO user signed in (SPEC §18). */
  who?: string | null;
  role?: 'viewer' | 'operator' | 'admin' | null;
  /** The apps the session acts on; empty: every app (SPEC §18). */
  apps?: string[];
  /** Single sign-on is configured: the login page offers it. */
  sso?: boolean;
}

/** One row of the audit log (SPEC §18). */
export interface AuditJson {
  seq: number;
  at: string;
  who: string;
  who_kind: 'token' | 'user' | 'anonymous';
  role: string | null;
  action: string;
  app: string | null;
  job: string | null;
  run: string | null;
  from: 'api' | 'cli' | 'ui';
  address: string | null;
  replica: string | null;
  forwarded: boolean;
  result: 'ok' | 'refused' | 'failed';
  status: number;
  detail: string | null;
}

let csrf: string | null = null;
let onUnauthorized: () => void = () => undefined;

/** Remembers the session (its CSRF token, what it may do) after a login or at start. */
export function rememberSession(s: SessionState): void {
  csrf = s.csrf_token;
  rememberAccess(s.authenticated ? s : { role: null });
}

/** Called when a request answers 401 (the session ended). */
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

/**
 * Asks whether the session still holds (the event stream was refused: it may have ended) and,
 * when it does not, says so as a 401 would.
 */
export async function checkSession(): Promise<void> {
  const s = await get<SessionState>('/api/v1/session').catch(() => null);
  if (s !== null && !s.authenticated) onUnauthorized();
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (err) {
    throw new ApiError(0, 'network', `the daemon did not answer (${(err as Error).message})`);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string } } | null)?.error;
    // every API read needs the session too: a 401 anywhere means it ended (expired, logged out)
    if (res.status === 401 && path !== '/api/v1/session') onUnauthorized();
    throw new ApiError(res.status, e?.code ?? 'http', e?.message ?? `HTTP ${res.status}`);
  }
  return json as T;
}

/** GET a JSON document. */
export const get = <T>(path: string): Promise<T> => request<T>('GET', path);
/** POST (a mutation): carries the CSRF token. */
export const post = <T>(path: string, body?: unknown): Promise<T> => request<T>('POST', path, body);
/** DELETE (logout). */
export const del = <T>(path: string): Promise<T> => request<T>('DELETE', path);

/**
 * The API's routes, read once from its OpenAPI document, so optional ones
 * (`/api/v1/cluster` with an HA store, `/api/v1/runs/{id}/log` for command
 * jobs) are asked for only when the daemon has them: no 404 in the console.
 */
let paths: Promise<Set<string>> | null = null;
export function apiPaths(): Promise<Set<string>> {
  paths ??= get<{ paths: Record<string, unknown> }>('/openapi.json').then(
    (d) => new Set(Object.keys(d.paths)),
    () => new Set<string>(),
  );
  return paths;
}

/** A notification as the API returns it. */
export interface NotificationJson {
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

/** Encodes one path segment. */
export const seg = (s: string): string => encodeURIComponent(s);

// ---- wire shapes (see /openapi.json) ----

export type Outcome =
  | 'success'
  | 'app_rejected'
  | 'retries_exhausted'
  | 'skipped'
  | 'queue_full'
  | 'stopped'
  | 'crashed'
  | 'missed'
  | 'duplicate'
  | 'internal_error';

export interface AttemptJson {
  attempt: number;
  started_at: string | null;
  duration_ms: number;
  status: number | null;
  error: string | null;
  /** HTTP: the traceparent the attempt sent. */
  traceparent?: string | null;
  /** HTTP: the first 4 KiB of the response body. */
  response?: string | null;
  /** A host's command attempt: its exit code (SPEC §15). */
  exit_code?: number | null;
}

export interface RunJson {
  id: string;
  run_key: string;
  app: string;
  job: string;
  schedule_index: number | null;
  scheduled_time: string;
  trigger: 'schedule' | 'catchup' | 'manual' | 'replay' | 'host' | 'backfill' | 'service';
  phase: 'planned' | 'queued' | 'running' | 'ended';
  outcome: Outcome | null;
  attempts: number;
  last_status: number | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  due_at: string | null;
  duration_ms: number | null;
  error: string | null;
  attempt_log: AttemptJson[];
  /** Set by HA stores (SPEC §10). */
  leader_epoch?: number | null;
  /** Set for command jobs (SPEC §11). */
  output_truncated?: boolean;
  output_lost?: boolean;
  output_error?: string | null;
  /** Host runs (SPEC §15): who reported it, its exit code, clock and lateness. */
  host?: string | null;
  exit_code?: number | null;
  clock_skewed?: boolean;
  clock_skew_seconds?: number | null;
  lateness_seconds?: number | null;
  /** What a launched run waits for before its next attempt (`rate limit <key> (<n>/s)`). */
  waiting_for?: string | null;
}

export interface JobJson {
  app: string;
  job: string;
  schedules: string[];
  timezone: string;
  next_fire: string | null;
  paused: boolean;
  /** Why, who and since when it was paused (SPEC §16); null when not paused. */
  pause_note?: { reason: string | null; by: string | null; since: string | null } | null;
  /** Fire instants skipped (`cronix skip`) whose fire has not come (SPEC §16). */
  skips?: SkipJson[];
  enabled: boolean;
  last_outcome: Outcome | null;
  recent_outcomes: Outcome[];
  active: number;
  queued: number;
  /** `host`: a watched job (serve --watch), fired by host schedulers (SPEC §15). */
  fired_by?: 'daemon' | 'host';
  last_report?: { run_id: string; host: string; at: string } | null;
}

/** A skipped fire instant. */
export interface SkipJson {
  at: string;
  by: string;
  since: string;
}

/** A blackout window as written (SPEC §16 "Calendars"). */
export type BlackoutJson =
  | { cron: string; duration_seconds: number }
  | { from: string; to: string }
  | { dates_file: string };

export interface JobDetailJson extends JobJson {
  policy: Record<string, unknown>;
  /** `policy.blackout`: fires inside one are recorded skipped. */
  blackout?: BlackoutJson[];
  /** An HTTP job's request (absent for command jobs). */
  request?: { method: string; url: string; headers: Record<string, string> };
  /** A command job's argv and environment names (SPEC §11). */
  command?: { argv: string[]; env: string[]; env_from_secrets: string[] };
  signed: boolean;
  /** Who hears of its events (SPEC §12), defaults applied. */
  notify?: NotifyEntryJson[];
}

/** A job's notify entry. */
export interface NotifyEntryJson {
  to: string;
  type: 'webhook' | 'smtp';
  on: ('failed' | 'missed' | 'recovered' | 'slow')[];
  slow_after_seconds: number;
  repeat_every_seconds: number;
}

export interface Admission {
  run: RunJson;
  admission: 'started' | 'queued' | 'skipped' | 'queue_full' | 'scheduled';
}
