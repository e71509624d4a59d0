/** Times, durations and outcomes as the UI writes them. */
import type { Outcome, RunJson } from './api.js';

/** The viewer's zone. */
export const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const formats = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string, withDate: boolean): Intl.DateTimeFormat {
  const key = `${zone}|${withDate}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      ...(withDate ? { year: 'numeric', month: '2-digit', day: '2-digit' } : {}),
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    formats.set(key, f);
  }
  return f;
}

/** `2026-03-29 03:00:00 CEST` in `zone`. */
export function inZone(iso: string | number, zone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const parts = Object.fromEntries(
    formatter(zone, true)
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );
  return `${parts['year']}-${parts['month']}-${parts['day']} ${parts['hour']}:${parts['minute']}:${parts['second']} ${parts['timeZoneName']}`;
}

/** Both clocks: the job's zone, and the viewer's when it differs. */
export function bothClocks(
  iso: string | null,
  zone: string,
): { job: string; local: string | null } | null {
  if (iso === null) return null;
  return { job: inZone(iso, zone), local: zone === LOCAL_ZONE ? null : inZone(iso, LOCAL_ZONE) };
}

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** `in 5 min`, `3 h ago`. */
export function relative(iso: string | null, now = Date.now()): string {
  if (iso === null) return '';
  const d = new Date(iso).getTime() - now;
  const a = Math.abs(d);
  const text =
    a < 60_000
      ? `${Math.round(a / 1000)} s`
      : a < 3_600_000
        ? `${Math.round(a / 60_000)} min`
        : a < 172_800_000
          ? `${Math.round(a / 3_600_000)} h`
          : `${Math.round(a / 86_400_000)} days`;
  return d >= 0 ? `in ${text}` : `${text} ago`;
}

/** Outcome words (the wire value stays visible in the title). */
export const OUTCOME_TEXT: Record<Outcome, string> = {
  success: 'success',
  app_rejected: 'app rejected',
  retries_exhausted: 'retries exhausted',
  skipped: 'skipped',
  queue_full: 'queue full',
  stopped: 'stopped',
  crashed: 'crashed',
  missed: 'missed',
  duplicate: 'duplicate',
  internal_error: 'internal error',
};

/** Colour class of an outcome: ok, bad, warn (not a failure), muted. */
export function outcomeTone(o: Outcome | null): 'ok' | 'bad' | 'warn' | 'muted' | 'live' {
  switch (o) {
    case 'success':
      return 'ok';
    case 'app_rejected':
    case 'retries_exhausted':
    case 'crashed':
    case 'internal_error':
      return 'bad';
    case 'skipped':
    case 'queue_full':
    case 'stopped':
    case 'missed':
      return 'warn';
    case null:
      return 'live';
    default:
      return 'muted';
  }
}

/** The state of a run in words: its outcome, or its phase while it has none. */
export function runState(r: RunJson): string {
  if (r.outcome) return OUTCOME_TEXT[r.outcome];
  if (r.phase === 'queued') return r.due_at ? 'delayed' : 'queued';
  return r.phase;
}

/** The run's duration so far (running) or in all. */
export function runDuration(r: RunJson, now = Date.now()): number | null {
  if (r.duration_ms !== null) return r.duration_ms;
  if (r.started_at && r.phase === 'running') return now - new Date(r.started_at).getTime();
  return null;
}
