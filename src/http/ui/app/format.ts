/** Times, durations and outcomes as the UI writes them. */
import type { Outcome, RunJson } from './api.js';

/** The viewer's zone. */
export const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const formats = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(zone, f);
  }
  return f;
}

/** `UTC`, `UTC+01:00`, `UTC-05:00`, `UTC+05:30`: an offset in minutes as the UI writes it. */
export function offsetText(minutes: number): string {
  if (minutes === 0) return 'UTC';
  const a = Math.abs(minutes);
  const hm = `${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
  return `UTC${minutes < 0 ? '-' : '+'}${hm}`;
}

/**
 * The one way the UI writes an instant (docs/ui.md): `2026-03-29 03:00:00 UTC+02:00`, the wall
 * clock of `zone` in 24 hours, then that clock's offset from UTC — never a 12-hour clock, a
 * locale's day/month order or a zone abbreviation.
 */
export function inZone(iso: string | number, zone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  const p: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(d))
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p['year']!, p['month']! - 1, p['day'], p['hour'], p['minute'], p['second']);
  const offset = Math.round((wall - Math.floor(d.getTime() / 1000) * 1000) / 60_000);
  const two = (n: number | undefined) => String(n).padStart(2, '0');
  return `${p['year']}-${two(p['month'])}-${two(p['day'])} ${two(p['hour'])}:${two(p['minute'])}:${two(p['second'])} ${offsetText(offset)}`;
}

/** An instant in the viewer's zone, in the one format. */
export const inLocal = (iso: string | number): string => inZone(iso, LOCAL_ZONE);

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
